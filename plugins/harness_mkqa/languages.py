"""The 26 MKQA languages, in the order of the official scorer (its reports and its macro average)."""

MKQA_LANGUAGES: tuple[str, ...] = (
    "ar", "da", "de", "en", "es", "fi", "fr", "he", "hu", "it", "ja", "km", "ko",
    "ms", "nl", "no", "pl", "pt", "ru", "sv", "th", "tr", "vi", "zh_cn", "zh_hk", "zh_tw",
)
