"""Build the sample project's memory file, ``data/memory.sqlite3``, from the entries below.

The file is not committed (it is gitignored): ``06_memory.py`` calls ``ensure_seeded()`` on import,
so a clean clone works. Seeding is idempotent: an existing file is left alone. Run this script
with ``--force`` to rebuild it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from crux_devtools import MemoryStore

DATA = Path(__file__).resolve().parent / "data"
MEMORY_FILE = DATA / "memory.sqlite3"
TEAM = "nimbus:support"

# Team knowledge the support desk has distilled over time: assembled under a budget per ticket.
TEAM_ENTRIES = [
    ("mental_model", "Business customers care about admin control and audit trails more than price."),
    ("mental_model", "Most 'files missing' tickets are selective-sync settings, not data loss."),
    ("rule", "Never promise a refund; a billing specialist confirms every refund."),
    ("rule", "Never ask for a password or a full card number."),
    ("rule", "For a double charge, look up both invoices before replying."),
    ("lesson", "CSV exports over 2 GB time out; suggest exporting one month at a time."),
    ("lesson", "Sync stuck at 99% is usually one file with a name over 255 characters."),
    ("lesson", "iOS photo upload pauses when Low Power Mode is on; tell the customer to turn it off."),
    ("lesson", "A refund asked for within 14 days of renewal is almost always approved."),
    ("archive", "Ticket 988: 'export failed at 1.9 GB' - solved by monthly exports."),
    ("feedback", "Customers liked replies that link the exact settings page."),
    ("observation", "Tickets about invoices spike in the first week of each month."),
    ("log", "2026-11-02: status page incident, EU sync delayed 40 minutes."),
]

# What the desk knows about two customers, and their last exchanges.
USERS = {
    "dana": {
        "facts": [
            "Dana Okafor runs a 12-person design studio on the Business plan.",
            "Dana was charged twice for the November renewal (INV-1042 and INV-1043).",
            "Dana prefers short answers by email.",
        ],
        "messages": [
            "user: Why do I see two charges this month?",
            "assistant: I am checking both invoices with billing now.",
        ],
    },
    "lee": {
        "facts": [
            "Lee Park uses the Pro plan on a Linux laptop and an iPhone.",
            "Lee's sync stalls on a folder of RAW photos.",
        ],
        "messages": ["user: My photos stopped syncing again."],
    },
}


def seed(path: Path = MEMORY_FILE) -> None:
    """Write every entry into a fresh file at ``path`` (built beside it, then moved into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    with MemoryStore(partial) as store:
        store.remember_many(TEAM, [{"content": text, "entry_type": kind} for kind, text in TEAM_ENTRIES])
        for user, data in USERS.items():
            namespace = f"user:{user}"
            store.remember_many(namespace, [{"content": fact, "entry_type": "fact"} for fact in data["facts"]])
            store.remember_many(
                namespace, [{"content": m, "entry_type": "log", "lane": "messages:recent"} for m in data["messages"]]
            )
    # Closing the last connection checkpoints the WAL, so the single file is complete.
    if not path.exists():
        os.replace(partial, path)
    else:
        partial.unlink()


def ensure_seeded(path: Path = MEMORY_FILE) -> Path:
    """Seed ``path`` unless it already exists; safe to call on every import."""
    if not path.exists():
        seed(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description="Build the sample memory file.")
    parser.add_argument("--force", action="store_true", help="rebuild even if the file exists")
    args = parser.parse_args()
    if args.force:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{MEMORY_FILE}{suffix}").unlink(missing_ok=True)
    ensure_seeded()
    print(f"memory seeded: {MEMORY_FILE}")


if __name__ == "__main__":
    main()
