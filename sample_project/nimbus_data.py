"""Small, deterministic Nimbus data for lessons 4 and 5 (generated in code: no files to ship)."""

from __future__ import annotations

PRODUCTS = [
    ("NB-FREE", "Nimbus Free", "5 GB", "1 device", 0),
    ("NB-PRO-200", "Nimbus Pro 200", "200 GB", "5 devices", 3),
    ("NB-PRO-2TB", "Nimbus Pro 2 TB", "2 TB", "unlimited devices", 10),
    ("NB-FAM-2TB", "Nimbus Family 2 TB", "2 TB shared by 6", "unlimited devices", 14),
    ("NB-BIZ-STD", "Nimbus Business Standard", "1 TB per seat", "unlimited devices", 12),
    ("NB-BIZ-PLUS", "Nimbus Business Plus", "5 TB per seat", "unlimited devices", 20),
    ("NB-ARCHIVE", "Nimbus Cold Archive add-on", "10 TB", "web only", 8),
    ("NB-VAULT", "Nimbus Vault add-on", "50 GB encrypted", "2 devices", 2),
]
REGIONS = ["eu-west", "eu-central", "us-east", "us-west", "ap-south"]


def full_catalog(detail: int = 3) -> str:
    """The complete catalog: every product in every region, ``detail`` notes each (about 120 tokens a product per note level)."""
    lines = ["## Product catalog (complete)"]
    for sku, name, storage, devices, price in PRODUCTS:
        lines.append(f"### {name} ({sku})")
        lines.append(f"Storage {storage}; {devices}; EUR {price} per month, billed monthly or yearly (two months free).")
        for region in REGIONS:
            for note in range(detail):
                lines.append(
                    f"- {region}: {sku} is available; data stays in {region}; version history "
                    f"{30 * (note + 1)} days on request; support tier {note + 1}."
                )
    return "\n".join(lines)


CATALOG_INDEX = (
    "## Product catalog (index)\n"
    + "\n".join(f"- {sku}: {name}, {storage}, EUR {price}/month" for sku, name, storage, _d, price in PRODUCTS)
    + "\nCall lookup_sku for regional availability and details."
)


def sync_log(hours: int) -> str:
    """A sync-service log: twelve lines an hour, with an incident in hour 3 when there are enough hours."""
    lines = []
    for h in range(hours):
        for m in range(0, 60, 5):
            level = "ERROR" if h == 3 and m in (10, 15, 20) else "INFO"
            event = "upload stalled: token refresh failed" if level == "ERROR" else f"synced {(h * 60 + m) % 97 + 3} files"
            lines.append(f"2026-11-29T{h % 24:02d}:{m:02d}:00Z {level} device=laptop-7 {event}")
    return "\n".join(lines)


EXAMPLE_REPLIES = (
    "## Example replies\n\n"
    "Customer: My photos stopped syncing yesterday. Agent: Sorry about that. I can see your laptop's sync "
    "stalled after a sign-in token expired. Sign out of Nimbus and back in; syncing resumes within minutes.\n\n"
    "Customer: Can I share a folder with my family? Agent: Yes. On Family 2 TB, open the folder, choose Share, "
    "and add up to five people; they get their own space too.\n\n"
    "Customer: Do you keep my data in Europe? Agent: If your account region is eu-west or eu-central, your files "
    "stay in that region. You can check it under Settings, Account, Region.\n\n"
    "Customer: Why was I charged twice? Agent: I will check the invoice with lookup_order; a billing specialist "
    "confirms any refund."
)
