"""The parity trainer's acceptance run: one `fertility retrain` command, 22 languages, judged on FLORES devtest.

    fertility retrain NTREX-128 + FLORES-200 dev (22 languages) --vocab-size 64000
                      --target-parity FLORES-200 dev --held-out FLORES-200 devtest (22) -o DIR

Default settings otherwise. Targets: Gini <= 0.01, max premium <= 1.08, mean chars/token >= 3.0,
every devtest line round-trips, within 10 minutes (wall clock, whole process, after-audit included).
With `--superwords [FRACTION]` among the extra options (two-stage training, superwords.py), the
targets of superword tokens instead: Gini <= 0.01 with its 95% interval below 0.012, max premium
<= 1.06, mean chars/token >= 3.4; it also prints what stage two added per language.
Prints the figures from training.json (with their bootstrap intervals), recounts them with the raw
`tokenizers` library, and exits 1 if a target is missed.
Run: python benchmarks/bench_parity.py [CORPORA_DIR] [VOCAB] [extra retrain options...]
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tokenizers

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from real_files import SHARED_CORPORA

LANGS = ("amh", "arb", "ben", "deu", "eng", "fra", "hin", "jpn", "khm", "kor", "mya", "npi", "rus", "sin", "spa",
         "swh", "tam", "tel", "tha", "urd", "yor", "zho")
TARGETS = {"gini": 0.01, "max_premium": 1.08, "mean_chars_per_token": 3.0, "seconds": 600}
SUPERWORD_TARGETS = {"gini": 0.01, "gini_high": 0.012, "max_premium": 1.06, "mean_chars_per_token": 3.4, "seconds": 600}


def files(folder: Path) -> list[Path]:
    found = [p for p in sorted(folder.glob("*.txt")) if p.stem.split("_")[0] in LANGS]
    if len(found) != len(LANGS):
        sys.exit(f"{folder}: expected {len(LANGS)} language files, found {len(found)}")
    return found


def main() -> None:
    corpora = Path(sys.argv[1]) if len(sys.argv) > 1 else SHARED_CORPORA
    vocab = sys.argv[2] if len(sys.argv) > 2 else "64000"
    extra = sys.argv[3:]
    train = [corpora / "ntrex128", *files(corpora / "flores200" / "dev")]
    devtest = files(corpora / "flores200" / "devtest")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "tok"
        command = [sys.executable, "-m", "fertility", "retrain", *map(str, train), "--vocab-size", vocab,
                   "--target-parity", str(corpora / "flores200" / "dev"), "-o", str(out), "-q",
                   "-f", "csv", *extra]
        for path in devtest:
            command += ["--held-out", str(path)]
        print("$ fertility retrain ntrex128 flores200/dev/{22 langs} --vocab-size", vocab,
              "--target-parity flores200/dev --held-out flores200/devtest/{22 langs}", *extra, flush=True)
        started = time.perf_counter()
        done = subprocess.run(command, check=False, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"retrain failed ({done.returncode}): {done.stderr[-2000:]}")
        record = json.loads((out / "training.json").read_text(encoding="utf-8"))
        parity = record["held_out"]["parity"]
        tokenizer = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
        tokens, chars, broken = {}, {}, 0
        for path in devtest:
            lines = path.read_text(encoding="utf-8").splitlines()
            encodings = tokenizer.encode_batch(lines, add_special_tokens=False)
            broken += sum(tokenizer.decode(e.ids) != line for e, line in zip(encodings, lines))
            tokens[path.stem], chars[path.stem] = sum(len(e.ids) for e in encodings), sum(map(len, lines))
    premiums = {lang: n / tokens["eng_Latn"] for lang, n in tokens.items()}
    values = list(premiums.values())
    mean = sum(values) / len(values)
    gini = sum(abs(a - b) for a in values for b in values) / (2 * len(values) ** 2 * mean)
    cpt = sum(chars[lang] / tokens[lang] for lang in tokens) / len(tokens)
    worst = max(premiums, key=premiums.__getitem__)
    print(f"trainer {record['arguments']['trainer']} {record['arguments']['parity']}, "
          f"training {record['training_seconds']:.0f} s")
    words = record.get("superwords")
    if words:
        one, two, vocabulary = words["stage_one"], words["stage_two"], words["vocabulary"]
        print(f"superwords {record['arguments']['superwords']}: stage one {one['vocab_size']:,} tokens "
              f"({one['merges_dropped_for_holding_a_junction']} merges dropped), stage two {two['added_tokens']:,} "
              f"({vocabulary['superwords']:,} span words, {vocabulary['within_words']:,} within words; "
              f"{two['seconds_encoding']:.0f} s encoding, {two['seconds_training']:.0f} s training)")
    print(f"{'premium':10} {'chars/token':>11}  lang (95% interval)")
    for lang in sorted(premiums, key=premiums.__getitem__, reverse=True):
        p = parity["premiums"][lang]
        print(f"{premiums[lang]:10.3f} {chars[lang] / tokens[lang]:11.3f}  {lang} ({p['low']:.3f}-{p['high']:.3f})")
    if words:
        print(f"{'superword share':>15} {'stage-two share':>15}  lang: commonest superwords")
        for lang, row in words["held_out"].items():
            print(f"{row['n_superword_tokens'] / row['n_tokens']:15.1%} {row['n_stage_two_tokens'] / row['n_tokens']:15.1%}"
                  f"  {lang}: {' | '.join(row['examples'][:4])}")
    g = parity["gini"]
    measured = {"gini": gini, "gini_high": g["high"], "max_premium": premiums[worst], "mean_chars_per_token": cpt,
                "seconds": seconds}
    print(f"Gini {gini:.4f} (95% interval {g['low']:.4f}-{g['high']:.4f}), max premium {premiums[worst]:.3f} "
          f"({worst}), mean chars/token {cpt:.3f}, lines that do not round-trip: {broken}")
    print(f"whole command: {seconds:.0f} s wall, {cpu.ru_utime + cpu.ru_stime:.0f} s CPU")
    assert abs(gini - g["value"]) < 1e-9 and abs(cpt - parity["mean_chars_per_token"]) < 1e-9
    targets = SUPERWORD_TARGETS if words else TARGETS
    failed = [k for k, limit in targets.items()
              if (measured[k] < limit if k == "mean_chars_per_token" else measured[k] > limit)]
    if broken:
        failed.append("round trip")
    print("targets met" if not failed else f"targets missed: {', '.join(failed)}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
