"""The error edge: library errors become one line and an exit code, warnings one line, signals unwind."""

from __future__ import annotations

import io
import os
import signal
import sys
import traceback
import warnings

import click

from fertility.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_THRESHOLD_FAILED,
    FertilityError,
    FertilityWarning,
    Terminated,
)


class _Failure(click.ClickException):
    """A library error converted once, at the edge: one line on stderr and its exit code."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # click declares it on the class

    def show(self, file=None) -> None:
        kind = "check failed" if self.exit_code == EXIT_THRESHOLD_FAILED else "error"
        click.echo(f"fertility: {kind}: {self.message}", err=True)


class FertilityGroup(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("always", FertilityWarning)
                warnings.showwarning = _show_warning
                return super().invoke(ctx)
        except FertilityError as err:
            raise _Failure(str(err), err.exit_code) from None
        except KeyboardInterrupt:  # click would say "Aborted!" with exit 1, a failed threshold's code
            raise _Failure("interrupted", EXIT_INTERRUPTED) from None
        except Terminated as err:  # SIGTERM, SIGHUP: unwound (workers stopped), then 128 + N
            raise _Failure(f"terminated ({signal.Signals(err.signum).name})", err.exit_code) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:  # `fertility audit | head -1`: the reader has all it wanted
            silence_stdout()
            raise click.exceptions.Exit(EXIT_OK) from None
        except SystemExit as err:
            if isinstance(err.__context__, BrokenPipeError):  # rich's on_broken_pipe exits 1
                silence_stdout()
                raise click.exceptions.Exit(EXIT_OK) from None
            raise
        except GeneratorExit:
            raise
        except BaseException as err:  # noqa: BLE001 - a bug, ours or a native panic: never exit 1
            traceback.print_exc(file=sys.stderr)
            raise _Failure(f"internal error ({type(err).__name__}: {err}); please report it with "
                           "the traceback above", EXIT_INTERNAL) from None


_default_showwarning = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Our warnings are one line on stderr; anyone else's keep Python's format."""
    if issubclass(category, FertilityWarning):
        click.echo(f"fertility: warning: {message}", err=True)
    else:
        _default_showwarning(message, category, filename, lineno, file, line)


def silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail on a closed pipe
    ("Exception ignored ... BrokenPipeError")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a real file (CliRunner): nothing will flush to a closed pipe


def _terminate(signum: int, frame) -> None:
    raise Terminated(signum)


def unwind_on_termination() -> None:
    """SIGTERM and SIGHUP unwind the command as Ctrl-C does (worker processes stopped, partial
    files removed) instead of killing it where it stands; a signal the caller set to be ignored
    (`nohup` ignores SIGHUP) stays ignored."""
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None and signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _terminate)
