"""Progress bars for long work (tqdm on stderr, shown only on a terminal)."""

from __future__ import annotations


class Progress:
    """A progress bar (tqdm on stderr, shown only on a terminal) for long work."""

    def __init__(self, total: int, description: str, enabled: bool = True) -> None:
        from tqdm import tqdm

        self._bar = tqdm(total=total, desc=description, unit="it", leave=False,
                         disable=None if enabled else True, dynamic_ncols=True)

    def update(self, n: int = 1) -> None:
        self._bar.update(n)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
