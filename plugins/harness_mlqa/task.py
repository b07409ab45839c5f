"""MLQA: extractive QA where the context and the question may be in different languages.

Evaluation (Lewis et al., ACL 2020, section 5; ``facebookresearch/MLQA:mlqa_evaluation_v1.py``):

* every file ``{split}-context-{c}-question-{q}.json`` is scored on its own by the official MLQA
  scorer with the normaliser of the **context** language c (the answers are spans of the
  context): exact match and F1, 0-100, questions without a prediction scoring 0;
* **XLT** (cross-lingual transfer, ``mlqa`` or ``mlqa:mode=xlt``): the 7 same-language files
  (c = q); one row per language and their unweighted mean (``mean``), whose F1 is the main score;
* **G-XLT** (generalised cross-lingual transfer, ``mlqa:mode=gxlt``): all 49 (c, q) pairs, one
  row per pair named ``c-q`` with ``languages = [c, q]`` (``harness leaderboard show --task mlqa
  --matrix f1`` prints the 7x7 matrix: rows are context languages, columns question languages);
  ``gxlt`` is the mean of the off-diagonal cells -- the paper's G-XLT figure and the main score --
  and ``xlt`` the mean of the diagonal.

``--langs en,de`` selects languages (in G-XLT: every pair among them); in G-XLT a pair can also
be chosen by itself, ``--langs es-en`` (context es, question en), which is how one file is
scored: ``harness score mlqa:mode=gxlt --langs es-en --predictions preds.json``. Splits: dev and
test. Without ``--data-dir`` MLQA-style pairs are built from the built-in parallel demo set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from harness.plugin import DataRequest, HarnessError
from harness.plugin.scoring import Normalizer, multilingual
from harness.plugin.tasks import ParallelQADemo, SpanQAData, SpanQATask, SpanUnit, read_unit, span_data, span_unit
from harness_mlqa.data import Pair, Source, locate, official_name, parallel_pair, read_parallel
from harness_mlqa.metadata import MLQA as MLQA_METADATA
from harness_mlqa.metadata import MLQA_LANGUAGES

Mode = Literal["xlt", "gxlt"]


def mlqa(lang: str) -> Normalizer:
    """The official MLQA normaliser for answers in ``lang``: the core's multilingual normaliser,
    for MLQA's languages only (the official script raises on any other code). The same function
    object comes back for the same language, so scorers can memoise on it."""
    if lang not in MLQA_LANGUAGES:
        raise HarnessError(f"unknown MLQA answer language '{lang}' (known: {', '.join(MLQA_LANGUAGES)})")
    return multilingual(lang)


class MLQA(ParallelQADemo, SpanQATask):
    """MLQA, XLT or G-XLT, scored exactly as the official MLQA script."""

    metadata = MLQA_METADATA

    def __init__(
        self,
        mode: Mode = "xlt",
        prompt: str | None = None,
        shots: int = 0,
        shot_seed: int = 0,
        prompt_digest: str | None = None,
        generation: Mapping[str, Any] | None = None,
    ) -> None:
        """``mode``: ``xlt`` scores the same-language files, ``gxlt`` every (context, question) pair;
        ``prompt``, ``shots``, ``shot_seed``, ``prompt_digest``, ``generation``: how a generative
        model is prompted (see :class:`~harness.models.prompting.PromptedTask`)."""
        super().__init__(prompt, shots, shot_seed, prompt_digest, generation)
        self.mode = mode

    def options(self) -> dict[str, Any]:
        return {"mode": self.mode, **super().options()}

    def normalizer(self, unit: SpanUnit) -> Normalizer:
        return mlqa(unit.context_lang)

    def check_languages(self, languages: Sequence[str] | None) -> tuple[str, ...]:
        """Languages (``en``) and, in G-XLT, (context, question) pairs (``es-en``)."""
        if not languages:
            return self.metadata.languages
        for item in languages:
            context, dash, question = item.partition("-")
            if dash and self.mode != "gxlt":
                raise HarnessError(f"'{item}' is a (context, question) pair, a G-XLT cell: use mlqa:mode=gxlt")
            super().check_languages([context, question] if dash else [item])
        return tuple(languages)

    # -- data ---------------------------------------------------------------------------------

    def pairs(self, source: Source, selection: Sequence[str], explicit: bool) -> list[Pair]:
        """The (context, question) pairs to score, in the paper's language order."""
        languages = [item for item in selection if "-" not in item]
        if not explicit:
            languages = [lang for lang in languages if source.has_language(lang)]
            if not languages:
                raise HarnessError(f"no MLQA files for any of {', '.join(selection)} in {source.folder}")
        if self.mode == "xlt":
            return [(lang, lang) for lang in languages]
        chosen = {(c, q) for c in languages for q in languages}
        for item in selection:
            if "-" in item:
                context, _, question = item.partition("-")
                chosen.add((context, question))
        order = {lang: i for i, lang in enumerate(MLQA_LANGUAGES)}
        pairs = sorted(chosen, key=lambda pair: (order[pair[0]], order[pair[1]]))
        if all(c == q for c, q in pairs):
            raise HarnessError(
                "G-XLT needs a cross-language pair: select two or more languages or a pair such as "
                "es-en (same-language files are XLT: mlqa --langs es)"
            )
        return pairs

    def unit_name(self, pair: Pair) -> str:
        return pair[0] if self.mode == "xlt" else f"{pair[0]}-{pair[1]}"

    def unit_languages(self, pair: Pair) -> tuple[str, ...]:
        return pair[:1] if self.mode == "xlt" else pair

    def load(self, request: DataRequest) -> SpanQAData:
        assert request.data_dir is not None
        source = locate(request.data_dir, request.split, parallel=request.data_dir == self.demo_data_dir())
        selection = request.languages or self.metadata.languages
        explicit = selection != self.metadata.languages
        pairs = self.pairs(source, selection, explicit)
        if source.layout == "parallel":
            languages = list(dict.fromkeys(lang for pair in pairs for lang in pair))
            by_language, files = read_parallel(source.folder, languages)
            units = [
                span_unit(
                    self.unit_name(pair),
                    official_name(request.split, pair),
                    *pair,
                    self.unit_languages(pair),
                    parallel_pair(by_language, pair, files),
                    request.limit,
                    source=files[pair[0]],
                )
                for pair in pairs
            ]
            paths = list(files.values())
        else:
            paths = [source.path(pair) for pair in pairs]
            units = [
                read_unit(path, self.unit_name(pair), *pair, self.unit_languages(pair), request.limit)
                for pair, path in zip(pairs, paths)
            ]
        # Recorded languages: the languages, or the pairs when some were chosen one by one.
        by_pair = any("-" in item for item in selection)
        recorded = [unit.name for unit in units] if by_pair else list(dict.fromkeys(p[0] for p in pairs))
        return span_data(request, units, paths, recorded)

    def other_language_files(self, data: SpanQAData) -> dict[str, Path]:
        """The same-language file of every language in the folder the data came from (its contexts
        are those of every pair with that context language)."""
        folder = None if data.request is None else data.request.data_dir
        if folder is None:
            return {}
        try:
            source = locate(folder, data.split, parallel=folder == self.demo_data_dir())
        except HarnessError:
            return {}
        names = {
            lang: f"{lang}.json" if source.layout == "parallel" else source.file_name((lang, lang))
            for lang in MLQA_LANGUAGES
            if source.has_language(lang)
        }
        return {lang: source.folder / name for lang, name in names.items()}

    # -- scoring ------------------------------------------------------------------------------

    def summary_groups(self, units: Mapping[str, tuple[str, ...]]) -> dict[str, list[str]]:
        """XLT: the mean over languages. G-XLT: ``gxlt``, the mean of the off-diagonal cells (the
        main score), and ``xlt``, the mean of the diagonal cells."""
        if self.mode == "xlt":
            return super().summary_groups(units)
        cross = [name for name, langs in units.items() if langs[0] != langs[1]]
        same = [name for name, langs in units.items() if langs[0] == langs[1]]
        return {"gxlt": cross, **({"xlt": same} if same else {})}
