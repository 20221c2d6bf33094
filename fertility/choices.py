"""Option choices the command line offers before any library is imported.

`fertility --help` must start without numpy, pandas or a tokenizer library, so the choices its
options list live here, in a module that imports nothing; the modules that act on them import
them from here.
"""

FORMATS = ("table", "json", "csv", "markdown", "html")  # report/tables.py and report/html.py render each
UNITS = ("bytes", "graphemes")  # train/bpe.py and train/graphemes.py: what BPE merges are built from
BALANCES = ("equal", "natural")  # train/languages.py: how languages are weighted without --weights
TRAIN_PATTERN_NAMES = ("marks", "gpt2")  # patterns.TRAIN_PATTERNS: named pre-tokenizer splits
TRAINERS = ("bpe", "parity")  # train/reweighting.py (plain BPE) or train/parity_trainer.py (tokenizers' ParityBpeTrainer)
PARITY_VARIANTS = ("base", "window")  # train.ParitySettings
DEFAULT_PARITY_VARIANT = "window"
DEFAULT_GLOBAL_MERGES = 0.0  # share of merges learned as plain BPE before the parity ones
DEFAULT_PARITY_ALPHA = 3.0  # window variant: 2.0 (the library's default) left a 1.079 premium (khm)
MIN_ATOM_COUNT = 8  # train/parity_trainer.py, with graphemes: rarer clusters are spelled in bytes
MAX_TOKEN_CLUSTERS = 16  # train/parity_trainer.py, with graphemes: no longer tokens (0: no cap)
DEFAULT_SUPERWORDS = 0.075  # train/superwords.py: share learned across words (--superwords alone); README has the measurements
EXTEND_SPLITS = ("keep", "marks")  # train/extend.py: keep the base pre-tokenizer, or the mark-aware split
NORMALIZE_FORMS = ("nfc", "nfkc", "none")  # backends/_normalize.py: runtime normalization
