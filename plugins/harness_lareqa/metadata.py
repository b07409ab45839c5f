"""The languages of XQuAD-R (the files ``{lang}.json`` of the official release)."""

XQUAD_R_LANGUAGES: tuple[str, ...] = ("ar", "de", "el", "en", "es", "hi", "ru", "th", "tr", "vi", "zh")
