"""infra/pricing/prices.yaml follows the schema documented at its top."""

import datetime as dt
from pathlib import Path

import pytest
import yaml

from pipeline import submit

PRICES = Path(__file__).resolve().parents[2] / "infra" / "pricing" / "prices.yaml"
REQUIRED = {"service", "resource", "region", "unit", "usd", "as_of", "source", "assumed"}
OPTIONAL = {"hardware", "billing", "note"}
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
        assert ("hardware" in e) == (e["resource"] in {"tpu_chip", "gpu"}), pid
        assert ("billing" in e) == ("hardware" in e), pid


def test_tpu_is_billed_per_chip_hour_only_and_gpu_on_top_of_the_worker(table):
    for pid, e in table["prices"].items():
        if e["resource"] == "tpu_chip":
            assert (e["unit"], e["billing"]) == ("chip_hour", "per_chip_hour_only"), pid
        if e["resource"] == "gpu":
            assert (e["unit"], e["billing"]) == ("gpu_hour", "plus_worker_vcpu_memory"), pid


def test_every_submit_accelerator_has_a_price(table):
    priced = {e["hardware"] for e in table["prices"].values() if "hardware" in e}
    assert set(submit.ACCELERATORS) <= priced


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
