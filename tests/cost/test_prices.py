"""pipeline/data/prices.yaml follows the schema documented at its top."""

import datetime as dt
from pathlib import Path

import pytest
import yaml

from docbeam.pipeline.core.hardware import catalogue

PRICES = Path(__file__).resolve().parents[2] / "pipeline" / "data" / "prices.yaml"
REQUIRED = {"service", "resource", "region", "unit", "usd", "as_of", "source", "assumed"}
OPTIONAL = {"note"}
UNITS = {"vcpu_hour", "gb_hour", "chip_hour", "gpu_hour", "gb_month", "per_10k_ops"}
SERVICES = {"dataflow", "compute_engine", "cloud_storage"}


@pytest.fixture(scope="module")
def table() -> dict:
    return yaml.safe_load(PRICES.read_text())


def test_header(table):
    assert table["schema_version"] == 1
    assert table["currency"] == "USD"
    assert table["default_region"] == "us-central1"


def test_every_entry_follows_the_schema(table):
    for pid, e in table["prices"].items():
        assert REQUIRED <= set(e) <= REQUIRED | OPTIONAL, pid
        assert e["service"] in SERVICES and e["unit"] in UNITS, pid
        assert isinstance(e["usd"], int | float) and e["usd"] > 0, pid
        dt.date.fromisoformat(e["as_of"])
        assert e["source"].startswith("https://"), pid
        assert isinstance(e["assumed"], bool), pid
        if e["assumed"]:
            assert e.get("note"), f"{pid}: an assumed price must say where it comes from"


def test_every_accelerator_of_the_catalogue_has_its_price(table):
    """The hardware catalogue names a price per accelerator, in the unit of its kind."""
    for name, acc in catalogue().accelerators.items():
        entry = table["prices"].get(acc.price_id)
        assert entry is not None, f"{name}: no price entry {acc.price_id!r}"
        unit, resource = ("chip_hour", "tpu_chip") if acc.kind == "tpu" else ("gpu_hour", "gpu")
        assert (entry["unit"], entry["resource"]) == (unit, resource), name


def test_worker_and_storage_resources_are_priced(table):
    have = {(e["service"], e["resource"], e["unit"]) for e in table["prices"].values()}
    assert {
        ("dataflow", "vcpu", "vcpu_hour"),
        ("dataflow", "memory", "gb_hour"),
        ("compute_engine", "vcpu", "vcpu_hour"),
        ("compute_engine", "memory", "gb_hour"),
        ("cloud_storage", "storage", "gb_month"),
        ("cloud_storage", "class_a_ops", "per_10k_ops"),
        ("cloud_storage", "class_b_ops", "per_10k_ops"),
    } <= have
