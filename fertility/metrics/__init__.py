"""Statistics over counts: ratios, premiums, Gini and Lorenz, intervals, token distributions."""
