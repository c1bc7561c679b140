"""The price table (pipeline/data/prices.yaml, or --pricing FILE) and hourly rates per hardware.

Billing models, as Dataflow bills them:
- cpu:  vCPU-hours + GB-hours of the worker (a local run is priced as a Dataflow batch
        worker of this machine's size);
- TPU:  chip-hours only; the TPU worker's own vCPU and memory are not billed;
- GPU:  GPU-hours on top of the host worker's vCPU and memory: the host `docbeam submit`
        launches for that many GPUs (the hardware catalogue's machine, not a guess).
"""

from dataclasses import dataclass
from pathlib import Path

import yaml

from docbeam.pipeline.core.hardware import HardwareError, Worker, worker_for

# The table's one home: inside the package, so wheels and worker images carry it.
DEFAULT_TABLE = Path(__file__).resolve().parent.parent / "data" / "prices.yaml"


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
        return cls("pipeline/data/prices.yaml (default)" if path == DEFAULT_TABLE else str(path), raw["prices"])

    def entry(self, pid: str) -> dict:
        if pid not in self.prices:
            raise PricingError(f"price table {self.file}: no entry {pid!r}")
        return {"id": pid, **self.prices[pid]}


@dataclass
class Rates:
    """Hourly cost of one worker of `hardware` (a --hardware spec: cpu, tpu-v5e:4, l4:2, ...)."""

    table: PriceTable
    hardware: str = "cpu"

    def __post_init__(self):
        try:
            acc, self.worker = worker_for(self.hardware)
        except HardwareError as exc:
            raise PricingError(str(exc)) from exc
        self.lines: list[tuple[dict, float]] = []  # (price entry, quantity per hour)
        w = self.worker
        if acc is None:
            self._host(w)
            self.basis = f"Dataflow batch worker of this machine's size: {w.vcpus} vCPU, {w.memory_gb:.0f} GB"
            return
        self.lines.append((self.table.entry(acc.price_id), float(w.chips)))
        if acc.billed_per_chip_only:
            self.basis = (
                f"{w.chips} {acc.name} chip(s) ({w.machine_type}); Dataflow bills TPU workers per chip-hour only"
            )
        else:
            self._host(w)
            self.basis = f"{w.chips} {acc.name} GPU(s) + host {w.machine_type}: {w.vcpus} vCPU, {w.memory_gb:.0f} GB"

    def _host(self, w: Worker) -> None:
        self.lines.append((self.table.entry("dataflow_batch_vcpu_hour"), float(w.vcpus)))
        self.lines.append((self.table.entry("dataflow_batch_memory_gb_hour"), float(w.memory_gb)))

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
