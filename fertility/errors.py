"""Typed errors raised by the library; the CLI turns them into one line and an exit code.

Exit codes live here and nowhere else:
0 ran and passed, 1 a threshold failed, 2 usage or input error, 3 internal error,
130 interrupted.
"""

EXIT_OK = 0
EXIT_THRESHOLD_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT
EXIT_SIGNAL_BASE = 128  # killed by signal N: 128 + N, as shells report it (SIGTERM 143, SIGHUP 129)


class FertilityError(Exception):
    """Base class: a problem the user can fix; the message names the file and the fix."""

    exit_code = EXIT_USAGE


class UsageError(FertilityError):
    """Options that contradict each other or name nothing known."""


class InputError(FertilityError):
    """A file the user gave us cannot be used as it is."""


class CorpusError(InputError):
    """A corpus file or folder is missing, empty or not strict UTF-8."""


class TokenizerError(InputError):
    """A tokenizer spec names nothing loadable, or the file is corrupt."""


class ArgumentTypeError(UsageError, TypeError):
    """A library call got an object of a kind it cannot use (a tokenizer or a corpus it does not
    know): one message naming what was passed and what is accepted, never an AttributeError
    from deep inside. Also a TypeError, so code that catches TypeError for this still works."""


def described(value: object) -> str:
    """The kind of object a message names: `int`, `pandas.Series`, `tiktoken.core.Encoding`."""
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


class OutputError(FertilityError):
    """We refuse to write somewhere (an existing file, a missing folder)."""


class ThresholdFailed(FertilityError):
    """`check`: the run worked and a threshold did not hold; the message is the verdict."""

    exit_code = EXIT_THRESHOLD_FAILED


class FertilityWarning(UserWarning):
    """Input we accept but guess about (a file name that is no language code, an option that
    does not apply); the CLI prints each as one line `fertility: warning: ...`."""


class Terminated(BaseException):
    """SIGTERM or SIGHUP reached the command: unwind like Ctrl-C (workers stopped, temporary
    files removed), then exit 128 + the signal's number. A BaseException, so that no
    `except Exception` on the way swallows it."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return EXIT_SIGNAL_BASE + self.signum


# What a native call's `except BaseException` (a Rust panic derives from BaseException) must let
# through: the user stopping the command (Ctrl-C, SIGTERM, SIGHUP) and the interpreter's own exits.
# A signal's handler raises at the next bytecode, which can be inside such a `try`; were the
# exception turned into a fallback or an error there, the command would run on or fail wrongly.
NOT_NATIVE: tuple[type[BaseException], ...] = (KeyboardInterrupt, SystemExit, GeneratorExit, Terminated)
