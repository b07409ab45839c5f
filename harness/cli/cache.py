"""``harness cache info`` and ``clear``: the on-disk embedding cache, its sizes, and a check that
its shards still agree with the models that wrote them."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli.parsing import add_options
from harness.display.tables import format_table
from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.definitions.model import Model


def add_parsers(commands: Any) -> None:
    """The ``cache`` command and its actions, under the top parser's ``commands``."""
    cache = commands.add_parser("cache", help="the on-disk embedding cache")
    cache_commands = cache.add_subparsers(dest="cache_command", required=True, metavar="ACTION")
    info = cache_commands.add_parser("info", help="cached models, entries and sizes")
    info.add_argument(
        "--verify",
        action="store_true",
        help="also encode a seeded sample of each shard again with the model that wrote it (loaded "
        "as a run loads it) and compare: shards that disagree are listed and removed, exit status 2",
    )
    add_options(info, "cache info", grouped=False)
    clear = cache_commands.add_parser("clear", help="delete cached embeddings")
    clear.add_argument("--model", help="only the model with this label (as `cache info` shows it)")
    add_options(clear, "cache clear", grouped=False)


def run(args: argparse.Namespace, argv: Sequence[str]) -> None:
    from harness.models import cache

    root = args.cache_dir or cache.default_root()
    if args.cache_command == "info":
        items = cache.describe(root)
        print(f"embedding cache: {root}")
        if not items:
            print("(empty)")
            return
        print(
            format_table(
                ["model", "key", "entries", "MiB"],
                [
                    [
                        i["label"],
                        i["key"],
                        "-" if i["entries"] is None else str(i["entries"]),
                        f"{i['bytes'] / 2**20:.1f}",
                    ]
                    for i in items
                ],
            )
        )
        print(f"total: {sum(i['bytes'] for i in items) / 2**20:.1f} MiB")
        if args.verify:
            _verify(root)
    else:
        removed = cache.clear(root, args.model)
        if args.model and not removed:
            raise HarnessError(f"no cached model labelled '{args.model}' in {root} (see `harness cache info`)")
        print(f"removed the cached embeddings and checkpoints of {len(removed)} model(s) from {root}")


def _verify(root: Path) -> None:
    """``cache info --verify``: every cached model loaded again, its shards' samples encoded again
    (:func:`harness.models.cache.verify`); exit status 2 when a shard disagrees, for a maintainer's script."""
    from harness.definitions.model import Runtime, apply_threads, default_threads
    from harness.definitions.registry import Registry
    from harness.models import cache
    from harness.models.compose import rebuild_encoder

    registry = Registry.discover()
    runtime = Runtime(cache_dir=root, threads=default_threads(), registry=registry)

    def load(identity: dict[str, Any]) -> Model:
        model = rebuild_encoder(identity, registry, runtime)
        apply_threads(runtime)
        return model

    checks = cache.verify(root, load)
    print()
    if not checks:
        print("verify: no shards to verify")
        return
    print(
        format_table(
            ["model", "shard", "verdict", "detail"],
            [[c.label, str(c.shard.relative_to(root)), c.verdict, c.detail] for c in checks],
        )
    )
    counts = {verdict: sum(c.verdict == verdict for c in checks) for verdict in ("agrees", "disagrees", "not verified")}
    print(f"verify: {len(checks)} shards; {', '.join(f'{verdict}: {n}' for verdict, n in counts.items())}")
    if counts["disagrees"]:
        raise HarnessError(
            f"{counts['disagrees']} of {len(checks)} cached shards disagree with the model that wrote "
            "them and were removed (listed above); the next run encodes their texts again"
        )
