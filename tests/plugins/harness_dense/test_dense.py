"""The dense model: sharded exact search equals in-memory exact search; faiss indexes; reuse on disk."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.definitions.model import Runtime
from harness.definitions.protocols import Corpus
from harness.demo import LANGUAGES, parallel_qa_dir
from harness.errors import HarnessError
from harness.models.capabilities import EncoderRetriever
from harness_dense.model import DenseRetriever


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    ids, texts, langs = [], [], []
    for lang in LANGUAGES:
        doc = json.loads((parallel_qa_dir() / f"{lang}.json").read_text(encoding="utf-8"))
        for article in doc["data"]:
            for paragraph in article["paragraphs"]:
                for sentence in paragraph["sentences"]:
                    ids.append(str(len(ids)))
                    texts.append(sentence)
                    langs.append(lang)
    return Corpus(ids=ids, texts=texts, langs=langs)


QUERIES = ["Who founded the city?", "Wann wurde die Brücke gebaut?", "河流有多长？", "What is the capital?"]


def _dense(encoder_dir: Path, **options: object) -> DenseRetriever:
    model = DenseRetriever(runtime=Runtime(device_request="cpu"), encoder=f"hf-encoder:path={encoder_dir}", **options)
    model.name = "dense"
    return model


def test_sharded_exact_search_equals_in_memory_search(tiny_encoder_dir: Path, corpus: Corpus, tmp_path: Path) -> None:
    dense = _dense(tiny_encoder_dir, index_dir=tmp_path / "idx", shard_size=50, dtype="float32")
    index = dense.index(corpus)
    assert len(index.shards) == -(-len(corpus) // 50) == len(list((tmp_path / "idx").glob("vectors-*.npy")))
    reference = EncoderRetriever(dense.encoder).index(corpus).search(QUERIES, k=10)
    ranking = index.search(QUERIES, k=10)
    np.testing.assert_array_equal(ranking.indices, reference.indices)
    np.testing.assert_allclose(ranking.scores, reference.scores, rtol=1e-5)
    # faiss flat is exact too; HNSW and IVF (probing every list here) find the same top 10.
    for kind, options in (("flat", {}), ("hnsw", {"hnsw_m": 16}), ("ivf", {"nlist": 8, "nprobe": 8})):
        approximate = _dense(tiny_encoder_dir, index=kind, index_dir=tmp_path / "idx", dtype="float32", **options)
        found = approximate.index(corpus).search(QUERIES, k=10)
        recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found.indices, reference.indices)])
        assert recall >= 0.95, kind
    built = {
        path.name: json.loads(path.read_text(encoding="utf-8")) for path in (tmp_path / "idx").glob("faiss-*.json")
    }
    assert built == {
        "faiss-flat.json": {"kind": "flat"},
        "faiss-hnsw.json": {"kind": "hnsw", "hnsw_m": 16, "ef_construction": 200},
        "faiss-ivf.json": {"kind": "ivf", "nlist": 8},
    }


def assert_a_top_k(found: np.ndarray, scores: np.ndarray) -> None:
    """``found`` (queries x k positions) is a best-first top k of the reference ``scores`` (float64):
    the reference scores of what it found are the k best. Compared by scores, not positions: two
    passages whose scores differ by float32 rounding may come in either order."""
    best = np.sort(scores, axis=1)[:, ::-1][:, : found.shape[1]]
    np.testing.assert_allclose(np.take_along_axis(scores, found, axis=1), best, rtol=1e-5)


def test_float16_shards_rank_as_float16_vectors_do(tiny_encoder_dir: Path, corpus: Corpus, tmp_path: Path) -> None:
    """The default float16 shards: the ranking of the queries against the vectors rounded to
    float16 (computed here in float64), half the bytes on disk."""
    dense = _dense(tiny_encoder_dir, index_dir=tmp_path / "idx", shard_size=50)
    ranking = dense.index(corpus).search(QUERIES, k=10)
    vectors = np.concatenate([np.load(path) for path in sorted((tmp_path / "idx").glob("vectors-*.npy"))])
    assert vectors.dtype == np.float16
    passages = dense.encoder.encode(list(corpus.texts), role="passage", langs=list(corpus.langs))
    np.testing.assert_array_equal(vectors, passages.astype(np.float16))
    scores = dense.encoder.encode(QUERIES, role="query").astype(np.float64) @ vectors.astype(np.float64).T
    assert_a_top_k(ranking.indices, scores)


def test_int8_shards_rank_as_their_decoded_vectors(tiny_encoder_dir: Path, corpus: Corpus, tmp_path: Path) -> None:
    """int8 shards: per shard, each dimension's largest |value| is code 127 and every value is
    rounded to the nearest step, so a decoded value is within half a step of the encoder's; search
    ranks the decoded vectors (reference computed here in float64), with a quarter of float32's
    bytes. (Top-10 overlap with float32 search is a weak check on this tiny random encoder, whose
    trained vocabulary differs between installs: 0.875 to 1 seen; the benchmark measures recall.)"""
    folder = tmp_path / "idx"
    dense = _dense(tiny_encoder_dir, index_dir=folder, shard_size=50, dtype="int8")
    ranking = dense.index(corpus).search(QUERIES, k=10)
    passages = dense.encoder.encode(list(corpus.texts), role="passage", langs=list(corpus.langs))
    decoded = []
    for number, start in enumerate(range(0, len(corpus), 50)):
        block = passages[start : start + 50]  # float32, as the encoder gives them
        step = np.abs(block).max(axis=0) / np.float32(127)
        codes = np.load(folder / f"vectors-{number:05d}.npy")
        assert codes.dtype == np.int8 and codes.nbytes == block.size  # a byte a dimension
        assert np.abs(codes).max(axis=0).tolist() == [127] * block.shape[1]
        np.testing.assert_array_equal(codes, np.rint(block / step))
        scale = np.load(folder / f"vectors-{number:05d}.scale.npy")
        np.testing.assert_array_equal(scale, step)
        decoded.append(codes * scale.astype(np.float64))
        assert (np.abs(decoded[-1] - block) <= step.astype(np.float64) * (0.5 + 1e-5)).all()
    passages = passages.astype(np.float64)
    queries = dense.encoder.encode(QUERIES, role="query").astype(np.float64)
    scores = queries @ np.concatenate(decoded).T
    assert_a_top_k(ranking.indices, scores)
    np.testing.assert_allclose(ranking.scores, np.sort(scores, axis=1)[:, ::-1][:, :10], rtol=1e-4)
    exact = np.argsort(-(queries @ passages.T), axis=1, kind="stable")[:, :10]
    assert np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ranking.indices, exact)]) >= 0.75
    (folder / "vectors-00001.scale.npy").unlink()  # codes without their scale: encoded again
    with pytest.warns(RuntimeWarning, match=r"\(vectors-00001.scale.npy is missing\): encoding passages 50-99 again"):
        again = _dense(tiny_encoder_dir, index_dir=folder, dtype="int8").index(corpus).search(QUERIES, k=10)
    np.testing.assert_array_equal(again.indices, ranking.indices)


def test_ivfpq_compresses_and_refines_from_the_shards(tiny_encoder_dir: Path, corpus: Corpus, tmp_path: Path) -> None:
    """IVF-PQ keeps 16 bytes a vector; scoring its 4 x k best again with the shards' vectors
    finds more of exact search's top 10 than the codes alone, with exact scores."""
    exact = _dense(tiny_encoder_dir, index_dir=tmp_path / "idx").index(corpus).search(QUERIES, k=10)

    def recall(found: np.ndarray) -> float:  # hits over slots: 36 of 40 is 0.9 exactly, not a float mean's 0.8999...
        return sum(len(set(a) & set(b)) for a, b in zip(found, exact.indices)) / exact.indices.size

    codes_only = _dense(
        tiny_encoder_dir, index="ivfpq", nlist=4, nprobe=4, pq_m=16, refine=1, index_dir=tmp_path / "idx"
    )
    refined = _dense(tiny_encoder_dir, index="ivfpq", nlist=4, nprobe=4, pq_m=16, index_dir=tmp_path / "idx")
    index = refined.index(corpus)
    assert index.faiss.code_size == 16  # bytes a vector, where float16 takes 64
    found = index.search(QUERIES, k=10)
    assert recall(found.indices) > recall(codes_only.index(corpus).search(QUERIES, k=10).indices)
    assert recall(found.indices) >= 0.9
    same = found.indices == exact.indices
    np.testing.assert_allclose(found.scores[same], exact.scores[same], rtol=1e-6)
    with pytest.raises(HarnessError, match="pq_m=7 must divide the vectors' 32 dimensions"):
        _dense(tiny_encoder_dir, index="ivfpq", pq_m=7, index_dir=tmp_path / "idx").index(corpus)


def test_identity_records_encoder_and_index(tiny_encoder_dir: Path) -> None:
    identity = _dense(tiny_encoder_dir, index="hnsw", ef_search=64).identity()
    assert identity.options["index"] == {"kind": "hnsw", "hnsw_m": 32, "ef_construction": 200, "ef_search": 64}
    assert identity.options["encoder"]["name"] == "hf-encoder"
    assert identity.weights == identity.options["encoder"]["weights"] and identity.weights.startswith("sha256:")
    assert identity.label.endswith("[hnsw hnsw_m=32, ef_construction=200, ef_search=64, float16]")
    assert identity.options["dtype"] == "float16"


def test_vectors_are_reused_and_never_mixed_up(tiny_encoder_dir: Path, corpus: Corpus, tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    _dense(tiny_encoder_dir, index_dir=folder, shard_size=100).index(corpus)
    stamp = (folder / "vectors-00000.npy").stat().st_mtime_ns
    _dense(tiny_encoder_dir, index_dir=folder, shard_size=100).index(corpus).search(QUERIES, k=3)
    assert (folder / "vectors-00000.npy").stat().st_mtime_ns == stamp  # reloaded, not re-encoded
    smaller = Corpus(ids=corpus.ids[:10], texts=corpus.texts[:10], langs=corpus.langs[:10])
    with pytest.raises(HarnessError, match="differs in corpus, documents"):
        _dense(tiny_encoder_dir, index_dir=folder).index(smaller)


def test_the_corpus_encoding_is_counted_for_the_record(tiny_encoder_dir: Path, corpus: Corpus, tmp_path: Path) -> None:
    """Shard by shard, one service counts what it encoded (each shard's distinct texts, their
    tokens as the encoder counts them) and keeps no vectors; an index found on disk encodes none."""
    dense = _dense(tiny_encoder_dir, index_dir=tmp_path / "idx", shard_size=100)
    assert dense.encoding_stats is None
    dense.index(corpus)
    inner = dense.encoder.encoder
    shards = [list(dict.fromkeys(corpus.texts[start : start + 100])) for start in range(0, len(corpus), 100)]
    stats = dense.encoding_stats
    assert stats is not None and stats.encoded == sum(map(len, shards)) > 100
    assert stats.tokens == sum(sum(inner.token_lengths(texts, role="passage")) for texts in shards)
    assert stats.seconds > 0 and stats.tokens_per_s is not None
    assert dense._passages is not None and not dense._passages._memory
    assert dense.precision == inner.precision
    again = _dense(tiny_encoder_dir, index_dir=tmp_path / "idx")
    again.index(corpus)
    assert again.encoding_stats is None


def test_a_shard_reaches_the_encoder_a_chunk_at_a_time(
    tiny_encoder_dir: Path, corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An encoder tokenises all it is handed at once: a shard is handed over PASSAGE_CHUNK
    passages at a time, and the index is the same."""
    from harness_dense import model as dense_model

    monkeypatch.setattr(dense_model, "PASSAGE_CHUNK", 40)
    dense = _dense(tiny_encoder_dir, index_dir=tmp_path / "idx", shard_size=100, dtype="float32")
    inner = dense.encoder.encoder
    handed: list[int] = []
    counted = inner.token_lengths
    monkeypatch.setattr(inner, "token_lengths", lambda texts, **kw: handed.append(len(texts)) or counted(texts, **kw))
    ranking = dense.index(corpus).search(QUERIES, k=10)
    assert max(handed) == 40 and sum(handed) >= len(corpus)
    reference = EncoderRetriever(dense.encoder).index(corpus).search(QUERIES, k=10)
    np.testing.assert_array_equal(ranking.indices, reference.indices)
