"""Reading corpora: layouts, document modes, language keys, strict UTF-8."""

import pytest

from fertility.errors import CorpusError
from fertility.io.corpus import read_corpus
from fertility.io.languages import language_of


def write(path, text, encoding="utf-8"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def test_folder_of_lang_files_one_document_per_line(tmp_path):
    write(tmp_path / "eng_Latn.txt", "one line\n\ntwo line\n")
    write(tmp_path / "ben_Beng.txt", "এক\nদুই\n")
    corpus = read_corpus([tmp_path])
    assert corpus.scripts == {"ben_Beng": "Beng", "eng_Latn": "Latn"}
    assert [(d.lang, d.text, d.line) for d in corpus.documents] == [
        ("ben_Beng", "এক", 1), ("ben_Beng", "দুই", 2),
        ("eng_Latn", "one line", 1), ("eng_Latn", "two line", 3)]


def test_per_file_joins_lines_with_one_space(tmp_path):
    write(tmp_path / "eng_Latn.txt", "a b\r\nc\n\nd\n")
    corpus = read_corpus([tmp_path], doc_mode="file")
    assert [d.text for d in corpus.documents] == ["a b c d"]


def test_split_folders_are_read_in_order(tmp_path):
    write(tmp_path / "dev" / "eng_Latn.txt", "dev line\n")
    write(tmp_path / "devtest" / "eng_Latn.txt", "devtest line\n")
    corpus = read_corpus([tmp_path], doc_mode="file")
    assert [d.text for d in corpus.documents] == ["dev line", "devtest line"]
    assert len(corpus.files) == 2


def test_bare_iso_code_gets_detected_script(tmp_path):
    write(tmp_path / "bn.txt", "আমার সোনার বাংলা\n")
    write(tmp_path / "notes.txt", "plain English\n")
    corpus = read_corpus([tmp_path])
    assert corpus.scripts == {"bn": "Beng", "notes": "Latn"}


@pytest.mark.parametrize("name, expected", [
    ("ben_Beng.txt", ("ben_Beng", "Beng")),
    ("zho_Hans.txt", ("zho_Hans", "Hans")),
    ("bn.txt", ("bn", None)),
    ("eng_Xxxx.txt", ("eng_Xxxx", None)),
])
def test_language_of(tmp_path, name, expected):
    assert language_of(tmp_path / name) == expected


def test_bom_and_crlf_are_not_text(tmp_path):
    write(tmp_path / "eng_Latn.txt", b"\xef\xbb\xbfhello\r\nworld\r\n")
    assert [d.text for d in read_corpus([tmp_path]).documents] == ["hello", "world"]


def test_unicode_line_separator_stays_inside_a_document(tmp_path):
    write(tmp_path / "eng_Latn.txt", "a\u2028b\n")
    assert [d.text for d in read_corpus([tmp_path]).documents] == ["a\u2028b"]


def test_corpus_hash_depends_on_content_and_mode_not_location(tmp_path):
    one = write(tmp_path / "a" / "eng_Latn.txt", "same\n")
    two = write(tmp_path / "b" / "eng_Latn.txt", "same\n")
    assert read_corpus([one]).sha256 == read_corpus([two]).sha256
    assert read_corpus([one]).sha256 != read_corpus([one], doc_mode="file").sha256
    write(two, "different\n")
    assert read_corpus([one]).sha256 != read_corpus([two]).sha256


@pytest.mark.parametrize("setup, message", [
    (lambda d: d / "missing.txt", "no such file or directory"),
    (lambda d: write(d / "eng_Latn.txt", ""), "empty corpus file"),
    (lambda d: write(d / "eng_Latn.txt", "\n  \n"), "empty corpus file"),
    (lambda d: (d / "empty").mkdir() or d / "empty", "directory holds no .txt files"),
    (lambda d: write(d / "eng_Latn.txt", b"good line\nbad \xff byte\n"), "eng_Latn.txt:2:5: not valid UTF-8"),
    (lambda d: write(d / "ben_Beng.txt", "বাংলা\n", encoding="utf-16"), "not valid UTF-8"),
])
def test_bad_corpus_inputs(tmp_path, setup, message):
    path = setup(tmp_path)
    with pytest.raises(CorpusError) as err:
        read_corpus([path])
    assert message in str(err.value)
    assert str(path) in str(err.value)
    assert "\n" not in str(err.value)
