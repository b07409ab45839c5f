"""Integrity tests for the built-in parallel demo set (harness.demo).

The LAReQA task links answers across languages through question ids and
sentence indices, and the span-QA tasks slice ``context`` with
``answer_start``; a single off-by-one or a missing sentence in one language
silently corrupts scores, so every invariant the loaders rely on is checked
here for every file.  ``check_file`` and ``check_parallel`` return lists of
problems so that the negative tests below can prove they really fail on
broken data.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from harness.demo import LANGUAGES, parallel_qa_dir

N_ARTICLES = 8
N_QUESTIONS = 24
UNSPACED = {"zh", "th"}  # scripts written without spaces between words
LATIN = {"en", "de", "es", "vi"}


def load(lang: str) -> dict[str, Any]:
    """Parse ``<lang>.json`` from the demo folder."""
    with (parallel_qa_dir() / f"{lang}.json").open(encoding="utf-8") as f:
        return json.load(f)


def paragraphs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """All paragraphs of a SQuAD-style document, in file order."""
    return [p for art in doc["data"] for p in art["paragraphs"]]


def answer_sentence(par: dict[str, Any], start: int, text: str) -> int | None:
    """Index of the single sentence that fully contains the span, else None."""
    hits = [i for i, (s, e) in enumerate(par["sentence_breaks"]) if s <= start and start + len(text) <= e]
    return hits[0] if len(hits) == 1 else None


def check_file(doc: dict[str, Any]) -> list[str]:
    """Return every format problem in one language file (empty list = valid)."""
    errs: list[str] = []
    if doc.get("version") != "1.1":
        errs.append(f"version is {doc.get('version')!r}, expected '1.1'")
    data = doc.get("data", [])
    if len(data) != N_ARTICLES:
        errs.append(f"{len(data)} articles, expected {N_ARTICLES}")
    for art in data:
        if not art.get("title"):
            errs.append("article without title")
        if len(art.get("paragraphs", [])) != 1:
            errs.append(f"{art.get('title')}: expected exactly one paragraph")
    for par in paragraphs(doc):
        ctx: str = par["context"]
        sents: list[str] = par["sentences"]
        breaks: list[list[int]] = par["sentence_breaks"]
        tag = ctx[:30]
        if len(sents) != len(breaks):
            errs.append(f"{tag}: {len(sents)} sentences vs {len(breaks)} breaks")
            continue
        if not 4 <= len(sents) <= 5:
            errs.append(f"{tag}: {len(sents)} sentences, expected 4 or 5")
        if ctx != ctx.strip():
            errs.append(f"{tag}: context has leading/trailing whitespace")
        prev_end = 0
        for i, (sent, (s, e)) in enumerate(zip(sents, breaks)):
            if not (prev_end <= s < e <= len(ctx)):
                errs.append(f"{tag}: bad break {i} {[s, e]}")
                continue
            if ctx[s:e] != sent:
                errs.append(f"{tag}: sentence {i} != context[{s}:{e}]")
            if sent != sent.strip() or "  " in sent:
                errs.append(f"{tag}: sentence {i} has stray whitespace")
            gap = ctx[prev_end:s]
            if gap.strip():
                errs.append(f"{tag}: non-whitespace {gap!r} before sentence {i}")
            prev_end = e
        if breaks and breaks[0][0] != 0:
            errs.append(f"{tag}: first sentence does not start at 0")
        if breaks and breaks[-1][1] != len(ctx):
            errs.append(f"{tag}: last sentence does not end at len(context)")
        for qa in par["qas"]:
            qid = qa["id"]
            if not qid.isascii() or not qid.startswith("demo-"):
                errs.append(f"{qid!r}: id must be ASCII 'demo-...'")
            if not qa["question"].strip():
                errs.append(f"{qid}: empty question")
            if len(qa["answers"]) < 1:
                errs.append(f"{qid}: no answer")
                continue
            for ans in qa["answers"]:
                start, text = ans["answer_start"], ans["text"]
                if not text or ctx[start : start + len(text)] != text:
                    errs.append(f"{qid}: answer {text!r} not at {start}")
                elif answer_sentence(par, start, text) is None:
                    errs.append(f"{qid}: answer {text!r} not inside one sentence")
    return errs


def signature(doc: dict[str, Any]) -> list[tuple[int, list[tuple[str, int | None]]]]:
    """Language-independent shape: per paragraph, sentence count and (id, answer sentence)."""
    out = []
    for par in paragraphs(doc):
        qs = [
            (
                qa["id"],
                answer_sentence(par, qa["answers"][0]["answer_start"], qa["answers"][0]["text"]),
            )
            for qa in par["qas"]
        ]
        out.append((len(par["sentences"]), qs))
    return out


def check_parallel(docs: dict[str, dict[str, Any]], pivot: str = "en") -> list[str]:
    """Return every way in which the files are not parallel to ``pivot``."""
    errs: list[str] = []
    ref = signature(docs[pivot])
    ref_titles = [a["title"] for a in docs[pivot]["data"]]
    for lang, doc in docs.items():
        if [a["title"] for a in doc["data"]] != ref_titles:
            errs.append(f"{lang}: article titles/order differ from {pivot}")
        sig = signature(doc)
        if len(sig) != len(ref):
            errs.append(f"{lang}: {len(sig)} paragraphs vs {len(ref)} in {pivot}")
            continue
        for k, ((n, qs), (rn, rqs)) in enumerate(zip(sig, ref)):
            if n != rn:
                errs.append(f"{lang}: paragraph {k} has {n} sentences, {pivot} has {rn}")
            if [q for q, _ in qs] != [q for q, _ in rqs]:
                errs.append(f"{lang}: paragraph {k} question ids/order differ")
            elif qs != rqs:
                errs.append(f"{lang}: paragraph {k} answer sentence indices differ")
        nq = sum(len(qs) for _, qs in sig)
        if nq != N_QUESTIONS:
            errs.append(f"{lang}: {nq} questions, expected {N_QUESTIONS}")
    return errs


@pytest.fixture(scope="module")
def docs() -> dict[str, dict[str, Any]]:
    return {lang: load(lang) for lang in LANGUAGES}


def test_language_list_and_files() -> None:
    assert LANGUAGES[0] == "en"
    assert len(set(LANGUAGES)) == len(LANGUAGES) >= 6
    assert set(LANGUAGES) - LATIN, "need at least one non-Latin script"
    assert set(LANGUAGES) & UNSPACED, "need at least one unspaced script (zh/th)"
    folder = parallel_qa_dir()
    assert folder.is_dir()
    assert sorted(p.stem for p in folder.glob("*.json")) == sorted(LANGUAGES)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_file_is_valid_xquad_r(docs: dict[str, dict[str, Any]], lang: str) -> None:
    assert check_file(docs[lang]) == []


def test_files_are_parallel(docs: dict[str, dict[str, Any]]) -> None:
    assert check_parallel(docs) == []


def test_question_ids_unique(docs: dict[str, dict[str, Any]]) -> None:
    ids = [qa["id"] for par in paragraphs(docs["en"]) for qa in par["qas"]]
    assert len(ids) == len(set(ids)) == N_QUESTIONS


@pytest.mark.parametrize("lang", sorted(UNSPACED & set(LANGUAGES)))
def test_unspaced_scripts_have_few_spaces(docs: dict[str, dict[str, Any]], lang: str) -> None:
    # Guards against an English or transliterated paragraph landing in zh/th.
    for par in paragraphs(docs[lang]):
        ctx = par["context"]
        assert ctx.count(" ") < len(ctx) / 15, ctx[:40]
    if lang == "zh":
        for par in paragraphs(docs[lang]):
            assert all(s.endswith("。") for s in par["sentences"])
            assert " " not in "".join(par["context"][e : e + 1] for _, e in par["sentence_breaks"])


def test_translations_differ_from_english(docs: dict[str, dict[str, Any]]) -> None:
    en = [s for par in paragraphs(docs["en"]) for s in par["sentences"]]
    for lang, doc in docs.items():
        if lang == "en":
            continue
        other = [s for par in paragraphs(doc) for s in par["sentences"]]
        assert not set(en) & set(other), f"{lang} contains untranslated English sentences"


# --- negative tests: the checkers above must catch broken data -------------


def test_checker_catches_shifted_answer(docs: dict[str, dict[str, Any]]) -> None:
    bad = copy.deepcopy(docs["th"])
    paragraphs(bad)[0]["qas"][0]["answers"][0]["answer_start"] += 1
    assert any("not at" in e for e in check_file(bad))


def test_checker_catches_bad_sentence_break(docs: dict[str, dict[str, Any]]) -> None:
    bad = copy.deepcopy(docs["zh"])
    paragraphs(bad)[2]["sentence_breaks"][1][1] -= 1
    assert check_file(bad)


def test_checker_catches_answer_across_sentences(docs: dict[str, dict[str, Any]]) -> None:
    bad = copy.deepcopy(docs["en"])
    par = paragraphs(bad)[0]
    end = par["sentence_breaks"][0][1]
    span = par["context"][end - 3 : end + 4]
    par["qas"][0]["answers"][0] = {"answer_start": end - 3, "text": span}
    assert any("one sentence" in err for err in check_file(bad))


def test_checker_catches_non_parallel_files(docs: dict[str, dict[str, Any]]) -> None:
    bad = copy.deepcopy(docs)
    qas = paragraphs(bad["de"])[1]["qas"]
    qas[0], qas[1] = qas[1], qas[0]
    assert check_parallel(bad)
    bad = copy.deepcopy(docs)
    par = paragraphs(bad["ru"])[3]
    del par["sentences"][-1], par["sentence_breaks"][-1]
    assert check_parallel(bad)
