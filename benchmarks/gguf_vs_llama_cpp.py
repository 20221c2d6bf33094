"""Per-line token ids of fertility's GGUF backend against llama.cpp itself, on FLORES devtest.

llama.cpp is not a dependency: build its library from the llama-cpp-python sdist (vendor/llama.cpp,
cmake -DGGML_NATIVE=OFF, CPU only) and compile the 30-line tool below against it:

    g++ -O2 -std=c++17 llama_lines.cpp -I vendor/llama.cpp/include -I vendor/llama.cpp/ggml/include \\
        build/src/libllama.a build/ggml/src/libggml.a build/ggml/src/libggml-cpu.a \\
        build/ggml/src/libggml-base.a -lpthread -ldl -o llama-lines

    python benchmarks/gguf_vs_llama_cpp.py path/to/llama-lines [CORPUS_DIR]
    python benchmarks/gguf_vs_llama_cpp.py path/to/llama-lines --write-reference

The second form rewrites tests/data/gguf_llama_cpp_flores.json: llama.cpp's per-line token
counts for the first lines of a few FLORES devtest languages, which tests/backends/test_gguf.py checks
against without llama.cpp.

It reads lines on stdin and prints each line's ids (llama_tokenize with add_special=false,
parse_special=false: what an audit counts). We compare ids, not only counts, line by line.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

LLAMA_LINES_CPP = r'''
#include "llama.h"
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>
static void quiet(enum ggml_log_level, const char *, void *) {}
int main(int argc, char ** argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s vocab.gguf < lines\n", argv[0]); return 2; }
    llama_log_set(quiet, nullptr);
    llama_backend_init();
    auto params = llama_model_default_params();
    params.vocab_only = true;
    llama_model * model = llama_model_load_from_file(argv[1], params);
    if (!model) { fprintf(stderr, "cannot load %s\n", argv[1]); return 1; }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    std::string line;
    std::vector<llama_token> ids(1 << 20);
    while (std::getline(std::cin, line)) {
        int n = llama_tokenize(vocab, line.c_str(), (int) line.size(), ids.data(), (int) ids.size(), false, false);
        for (int i = 0; i < n; ++i) printf(i ? " %d" : "%d", ids[i]);
        printf("\n");
    }
    llama_model_free(model);
    return 0;
}
'''


def llama_cpp_ids(tool: Path, vocab: Path, text: str) -> list[list[int]]:
    done = subprocess.run([str(tool), str(vocab)], input=text.encode("utf-8"), capture_output=True, check=True)
    return [[int(i) for i in line.split()] for line in done.stdout.decode().split("\n")[:-1]]


VOCABS = ["llama-bpe", "llama-spm", "qwen2", "qwen35", "gpt-2", "phi-3", "command-r", "deepseek-llm",
          "deepseek-coder", "starcoder", "falcon", "mpt", "refact", "bert-bge", "gemma-4"]


def compare(tool: Path, corpus: Path, vocabs: list[str]) -> int:
    from real_files import real_file

    from fertility import load_tokenizer

    files = sorted(corpus.glob("*.txt"))
    total_bad = 0
    for name in vocabs:
        path = real_file(f"gguf/ggml-vocab-{name}.gguf")
        tokenizer = load_tokenizer(str(path))
        started, n_lines, n_tokens, bad_cells = time.perf_counter(), 0, 0, []
        for file in files:
            lines = file.read_text(encoding="utf-8").split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            theirs = llama_cpp_ids(tool, path, "".join(line + "\n" for line in lines))
            ours = [tokenizer.ids(line) for line in lines]
            differ = sum(a != b for a, b in zip(ours, theirs)) + abs(len(ours) - len(theirs))
            n_lines += len(lines)
            n_tokens += sum(map(len, theirs))
            if differ:
                bad_cells.append(f"{file.stem}: {differ} lines")
        total_bad += len(bad_cells)
        verdict = "all equal" if not bad_cells else "DIFFER " + ", ".join(bad_cells)
        print(f"{name:<15} {len(files)} languages, {n_lines} lines, {n_tokens} llama.cpp tokens: {verdict} "
              f"({time.perf_counter() - started:.1f} s)", flush=True)
    return total_bad


REFERENCE = ROOT / "tests" / "data" / "gguf_llama_cpp_flores.json"
REFERENCE_LANGS = ("amh_Ethi", "ben_Beng", "hin_Deva", "kor_Hang", "tam_Taml", "zho_Hans", "eng_Latn")
REFERENCE_LINES = 100


def write_reference(tool: Path, corpus: Path, vocabs: list[str]) -> None:
    import json

    from real_files import real_file

    counts: dict[str, dict[str, list[int]]] = {}
    for name in vocabs:
        path = real_file(f"gguf/ggml-vocab-{name}.gguf")
        counts[name] = {}
        for lang in REFERENCE_LANGS:
            lines = (corpus / f"{lang}.txt").read_text(encoding="utf-8").split("\n")[:REFERENCE_LINES]
            counts[name][lang] = [len(ids) for ids in llama_cpp_ids(tool, path, "".join(t + "\n" for t in lines))]
    REFERENCE.parent.mkdir(exist_ok=True)
    payload = {"made_by": "benchmarks/gguf_vs_llama_cpp.py --write-reference",
               "llama_cpp": "llama-cpp-python 0.3.36 sdist, vendor/llama.cpp, llama_tokenize(add_special=false, "
                            "parse_special=false)",
               "corpus": "flores200/devtest", "first_lines": REFERENCE_LINES, "counts": counts}
    REFERENCE.write_text(json.dumps(payload, indent=0, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {REFERENCE}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    write = "--write-reference" in sys.argv
    arguments = [a for a in sys.argv[1:] if a != "--write-reference"]
    corpus_dir = Path(arguments[1]) if len(arguments) > 1 else ROOT.parent / "shared" / "corpora" / "flores200" / "devtest"
    names = VOCABS
    if write:
        write_reference(Path(arguments[0]), corpus_dir, names)
    else:
        sys.exit(1 if compare(Path(arguments[0]), corpus_dir, names) else 0)
