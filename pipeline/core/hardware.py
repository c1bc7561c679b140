"""The hardware catalogue (pipeline/data/hardware.yaml): accelerator -> Dataflow worker type,
machine per chip count, host vCPU and memory, peak FLOP/s per dtype, price id.

Read by `docbeam submit` (what to launch), the cost report (what that costs), `docbeam
estimate` (how fast it might be) and the Airflow DAG, so a run is billed as the machine that
was actually launched. No Beam, no JAX.
"""

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

CATALOGUE = Path(__file__).resolve().parent.parent / "data" / "hardware.yaml"


class HardwareError(ValueError):
    """A hardware name or chip count the catalogue does not have."""


@dataclass(frozen=True)
class Worker:
    """One machine that carries `chips` accelerators (or none: the CPU worker)."""

    machine_type: str
    chips: int
    vcpus: int
    memory_gb: float
    topology: str | None = None
    host_bounds: tuple[int, ...] = ()  # TPU chips per host along x, y, z (what libtpu compiles for)


@dataclass(frozen=True)
class Accelerator:
    name: str
    kind: str  # "tpu" | "gpu"
    dataflow_type: str | None  # None: not offered as a Dataflow worker
    price_id: str
    peak_tflops: dict[str, float]
    workers: dict[int, Worker]  # chips per worker -> machine
    source: str
    compile_name: str = ""  # TPU: libtpu's topology prefix (v5e, v6e, v5p)
    hbm_gb: float = 0.0  # TPU: HBM per chip, GiB
    hbm_gbps: float = 0.0  # TPU: HBM bandwidth per chip, GB/s

    @property
    def billed_per_chip_only(self) -> bool:
        """Dataflow bills TPU workers per chip-hour only; GPU workers also pay for their host."""
        return self.kind == "tpu"

    def worker(self, chips: int) -> Worker:
        if chips not in self.workers:
            unit = "GPUs" if self.kind == "gpu" else "chips"
            raise HardwareError(f"{self.name} workers come with {sorted(self.workers)} {unit}, not {chips}")
        return self.workers[chips]

    def by_topology(self, topology: str) -> Worker:
        for w in self.workers.values():
            if w.topology == topology:
                return w
        known = [w.topology for w in self.workers.values() if w.topology]
        raise HardwareError(f"unknown {self.name} topology {topology!r}; choose one of {', '.join(known)}")


@dataclass(frozen=True)
class HostRates:
    """What a worker's host work moves, in document tokens/s, measured with docbeam on `cpu`:
    a host-pool process parsing and chunking (`pool_per_core`), and the one process that packs,
    drives the chips, assembles and writes (`encoding_process`, whatever the pool feeds it)."""

    pool_per_core: float
    encoding_process: float
    cpu: str
    source: str

    def of_worker(self, vcpus: int) -> tuple[float, str]:
        """A worker's host rate and what sets it: its vCPUs less the encoding process's one,
        each a pool process at the measured per-core rate, capped by the encoding process."""
        pool = max(vcpus - 1, 1) * self.pool_per_core
        if pool < self.encoding_process:
            return pool, f"{max(vcpus - 1, 1)} host-pool processes x {self.pool_per_core:,.0f} per core"
        return self.encoding_process, (
            f"the encoding process (packs, feeds the chips, assembles, writes; one per worker), fed by "
            f"{vcpus - 1} host-pool processes that could parse and chunk {pool:,.0f}"
        )

    def binding(self, vcpus: int, chips_rate: float) -> tuple[float, str, str]:
        """The worker's host rate, what sets it, and which of "host" and "chips" is lower."""
        rate, what = self.of_worker(vcpus)
        return rate, what, "host" if rate < chips_rate else "chips"

    def basis(self) -> str:
        return f"MEASURED on {self.cpu} ({self.source}), not on the worker's own CPU"


@dataclass(frozen=True)
class Catalogue:
    accelerators: dict[str, Accelerator]
    assumed_mfu: float
    measured: dict[str, float]  # accelerator -> encoder tokens/s per chip measured with docbeam
    assumed_roofline_efficiency: float  # estimate: the fraction of the compiled roofline assumed
    worker_image: dict[str, str]  # distribution -> version the TPU worker image pins
    host: HostRates  # the host work's rates (graph.host_pool), measured with docbeam

    def get(self, name: str) -> Accelerator:
        if name not in self.accelerators:
            raise HardwareError(f"unknown hardware {name!r}; known: cpu, {', '.join(self.accelerators)}")
        return self.accelerators[name]

    def on_dataflow(self) -> list[str]:
        return sorted(n for n, a in self.accelerators.items() if a.dataflow_type)


@functools.cache
def catalogue(path: Path = CATALOGUE) -> Catalogue:
    raw = yaml.safe_load(Path(path).read_text())
    accs = {}
    for name, a in raw["accelerators"].items():
        workers = {
            int(chips): Worker(
                w["machine_type"],
                int(chips),
                w["vcpus"],
                w["memory_gb"],
                w.get("topology"),
                tuple(w.get("host_bounds", ())),
            )
            for chips, w in a["workers"].items()
        }
        accs[name] = Accelerator(
            name,
            a["kind"],
            a.get("dataflow_type"),
            a["price_id"],
            dict(a["peak_tflops"]),
            workers,
            a["source"],
            a.get("compile_name", ""),
            float(a.get("hbm_gb", 0)),
            float(a.get("hbm_gbps", 0)),
        )
    return Catalogue(
        accs,
        float(raw["assumed_mfu"]),
        dict(raw.get("measured") or {}),
        float(raw["assumed_roofline_efficiency"]),
        dict(raw["worker_image"]),
        HostRates(**raw["host"]),
    )


def parse_spec(spec: str) -> tuple[str, int]:
    """'tpu-v5e' -> ('tpu-v5e', 1); 'l4:2' -> ('l4', 2): chips per worker."""
    name, _, count = spec.partition(":")
    try:
        n = int(count) if count else 1
    except ValueError:
        raise HardwareError(f"--hardware {spec!r}: the count after ':' must be an integer") from None
    if n < 1:
        raise HardwareError(f"--hardware {spec!r}: the count after ':' must be at least 1")
    return name, n


def this_machine() -> Worker:
    """The machine this process runs on, as a worker of no accelerator."""
    memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return Worker("this machine", 0, os.cpu_count() or 1, memory_gb)


def worker_for(spec: str) -> tuple[Accelerator | None, Worker]:
    """The accelerator (None for cpu) and the machine a `--hardware` spec stands for."""
    name, chips = parse_spec(spec)
    if name == "cpu":
        return None, this_machine()
    acc = catalogue().get(name)
    return acc, acc.worker(chips)
