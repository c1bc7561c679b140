"""The price table (infra/pricing/prices.yaml, or --pricing FILE) and hourly rates per hardware.

Billing models, as Dataflow bills them:
- cpu:  vCPU-hours + GB-hours of the worker (a local run is priced as a Dataflow batch
        worker of this machine's size);
- TPU:  chip-hours only; the TPU worker's own vCPU and memory are not billed;
- GPU:  GPU-hours on top of the host worker's vCPU and memory.
"""

import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

# pipeline/data/prices.yaml links to infra/pricing/prices.yaml, so the table ships inside the
# package (wheels and worker images follow the link) while infra/pricing/ stays its home.
DEFAULT_TABLE = Path(__file__).parent / "data" / "prices.yaml"
# Host machine of one GPU on Dataflow (vCPU, GB): g2-standard-4, a2-highgpu-1g, a2-ultragpu-1g, a3-highgpu-1g.
GPU_HOST = {"l4": (4, 16), "a100": (12, 85), "a100-80gb": (12, 170), "h100": (26, 234)}


class PricingError(ValueError):
    pass


@dataclass(frozen=True)
class PriceTable:
    file: str
    prices: dict[str, dict]

    @classmethod
    def load(cls, path: str | Path | None = None) -> "PriceTable":
        path = Path(path) if path else DEFAULT_TABLE
        try:
            raw = yaml.safe_load(path.read_text())
        except OSError as exc:
            hint = " (installed without the repository? pass --pricing FILE)" if not path.exists() else ""
            raise PricingError(f"price table {path}: cannot read{hint}: {exc.strerror}") from exc
        except yaml.YAMLError as exc:
            raise PricingError(f"price table {path}: does not parse: {exc}") from exc
        if not isinstance(raw, dict) or raw.get("schema_version") != 1 or not isinstance(raw.get("prices"), dict):
            raise PricingError(f"price table {path}: expected schema_version 1 with a `prices` mapping")
        for pid, entry in raw["prices"].items():
            missing = {"unit", "usd"} - set(entry or {})
            if missing or not isinstance(entry["usd"], int | float) or entry["usd"] < 0:
                raise PricingError(f"price table {path}: entry {pid!r} needs a unit and a non-negative usd")
        return cls("infra/pricing/prices.yaml (default)" if path == DEFAULT_TABLE else str(path), raw["prices"])

    def entry(self, pid: str) -> dict:
        if pid not in self.prices:
            raise PricingError(f"price table {self.file}: no entry {pid!r}")
        return {"id": pid, **self.prices[pid]}

    def accelerator(self, hardware: str) -> dict:
        for pid, e in self.prices.items():
            if e.get("hardware") == hardware:
                return {"id": pid, **e}
        known = sorted(e["hardware"] for e in self.prices.values() if e.get("hardware"))
        raise PricingError(f"no price for hardware {hardware!r} in {self.file}; known: cpu, {', '.join(known)}")


def parse_hardware(spec: str) -> tuple[str, int]:
    """'tpu-v5e' -> ('tpu-v5e', 1); 'l4:2' -> ('l4', 2)."""
    name, _, count = spec.partition(":")
    try:
        n = int(count) if count else 1
    except ValueError:
        raise PricingError(f"--hardware {spec!r}: the count after ':' must be an integer") from None
    return name, n


def machine_memory_gb() -> float:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30


@dataclass
class Rates:
    table: PriceTable
    hardware: str = "cpu"
    vcpus: int = field(default_factory=lambda: os.cpu_count() or 1)
    memory_gb: float = field(default_factory=machine_memory_gb)

    def __post_init__(self):
        self.name, self.count = parse_hardware(self.hardware)
        self.lines: list[tuple[dict, float]] = []  # (price entry, quantity per hour)
        if self.name == "cpu":
            self._host(self.vcpus, self.memory_gb)
            self.basis = f"Dataflow batch worker of this machine's size: {self.vcpus} vCPU, {self.memory_gb:.0f} GB"
            return
        acc = self.table.accelerator(self.name)
        self.lines.append((acc, float(self.count)))
        if acc.get("billing") == "per_chip_hour_only":
            self.basis = f"{self.count} {self.name} chip(s); Dataflow bills TPU workers per chip-hour only"
        else:
            vcpus, mem = GPU_HOST.get(self.name, (self.vcpus, self.memory_gb))
            self._host(vcpus * self.count, mem * self.count)
            self.basis = f"{self.count} {self.name} GPU(s) + host {vcpus * self.count} vCPU, {mem * self.count:.0f} GB"

    def _host(self, vcpus: float, memory_gb: float) -> None:
        self.lines.append((self.table.entry("dataflow_batch_vcpu_hour"), float(vcpus)))
        self.lines.append((self.table.entry("dataflow_batch_memory_gb_hour"), float(memory_gb)))

    @property
    def usd_per_hour(self) -> float:
        return sum(e["usd"] * q for e, q in self.lines)

    @property
    def assumed(self) -> bool:
        return any(e.get("assumed") for e, _ in self.lines)

    def gcs_usd(self, reads: int, writes: int) -> float:
        """Operations on Cloud Storage: class B per object read, class A per object written or listed."""
        a, b = self.table.entry("gcs_class_a_ops_10k"), self.table.entry("gcs_class_b_ops_10k")
        self._gcs = (a, b)
        return writes / 1e4 * a["usd"] + reads / 1e4 * b["usd"]

    def describe(self) -> dict:
        return {"name": self.hardware, "usd_per_hour": self.usd_per_hour, "basis": self.basis, "assumed": self.assumed}

    def source(self) -> dict:
        entries = [e for e, _ in self.lines] + list(getattr(self, "_gcs", ()))
        keep = ("unit", "usd", "region", "as_of", "source", "assumed")
        return {"file": self.table.file, "entries": [{"item": e["id"], **{k: e.get(k) for k in keep}} for e in entries]}
