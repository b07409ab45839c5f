"""Progress bars for long work (tqdm on stderr, shown only on a terminal)."""

from __future__ import annotations

import time


class Progress:
    """A progress bar (tqdm on stderr, shown only on a terminal) for long work.

    tqdm shows the count, the rate and the time left; work measured in tokens as well (encoding)
    passes them to :meth:`update`, and the bar adds the token rate, since texts per second alone
    mislead when text lengths vary tenfold.
    """

    def __init__(self, total: int, description: str, enabled: bool = True, unit: str = "it") -> None:
        from tqdm import tqdm

        self._bar = tqdm(
            total=total, desc=description, unit=unit, leave=False, disable=None if enabled else True, dynamic_ncols=True
        )
        self._tokens = 0
        self._start = time.perf_counter()

    def update(self, n: int = 1, *, tokens: int = 0) -> None:
        """``n`` more items done; ``tokens`` more tokens among them (shown as tokens/s)."""
        self._bar.update(n)
        if tokens:
            self._tokens += tokens
            elapsed = time.perf_counter() - self._start
            if elapsed > 0:
                self._bar.set_postfix_str(f"{self._tokens / elapsed:,.0f} tokens/s", refresh=False)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
