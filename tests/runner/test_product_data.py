"""``ancha doctor``'s data line: the install's own vendor data reads and each tool's own check of it
(GitHub's schema builds) passes."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from ancha.runner.product_data import check_product_data
from ancha.vendor.products import PRODUCTS
from ancha.world.kernel import vendor_data
from ancha.world.registry import registry


def test_product_data__an_intact_install_reads_every_file_and_builds_the_schema():
    found = check_product_data()
    assert found.problem is None
    assert found.files == len(registry().vendor_files) == 9
    (schema,) = found.found
    assert schema.startswith("GitHub's GraphQL schema builds (")
    assert int(schema.split("(")[1].split()[0].replace(",", "")) > 1600


def test_product_data__the_tools_list_exactly_the_files_regeneration_writes():
    assert sorted(registry().vendor_files) == sorted((p.tool, p.name) for p in PRODUCTS)


def test_product_data__a_damaged_file_is_named_with_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    (tmp_path / "okta" / "vendor").mkdir(parents=True)
    (tmp_path / "okta" / "vendor" / "rest.json.gz").write_bytes(gzip.compress(b"{not json")[:-4])
    real = vendor_data.location

    def damaged_okta(tool: str, name: str):
        return tmp_path / tool / "vendor" / f"{name}.json.gz" if tool == "okta" else real(tool, name)

    monkeypatch.setattr(vendor_data, "location", damaged_okta)
    found = check_product_data()
    assert found.problem is not None
    assert "okta/vendor/rest.json.gz is missing or damaged" in found.problem
    assert "reinstall Ancha" in found.problem
