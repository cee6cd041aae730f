"""newuser42 n10: docs/admin.md "The inventory file" pointed at a source docstring for the format; a newcomer
wanting a 2-GPU box had to open the package. The section now shows a YAML example — read here by the real loader
(:class:`jupyter_sched.inventory.static.StaticInventory`), so the doc cannot drift from what the server takes."""

from __future__ import annotations

import re
from pathlib import Path

from jupyter_sched.inventory import static
from jupyter_sched.inventory.static import StaticInventory

ADMIN = Path(__file__).resolve().parents[2] / "docs" / "admin.md"


def _example() -> str:
    text = ADMIN.read_text(encoding="utf-8")
    section = text[text.index("### The inventory file"):]
    section = section[:section.index("\n### ", 1)]
    found = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert found, "docs/admin.md's inventory section has no ```yaml example"
    return found.group(1)


def test_newuser42_n10_the_admin_docs_inventory_example_is_read_by_the_real_loader(tmp_path: Path) -> None:
    example = _example()
    assert all(len(line) <= 100 for line in example.splitlines())
    path = tmp_path / "nodes.yaml"
    path.write_text(example, encoding="utf-8")
    nodes = {node.name: node for node in StaticInventory(path).current().nodes}
    assert set(nodes) == {"gpu-node-1", "gpu-node-2"}
    box = nodes["gpu-node-1"]
    assert [(gpu.uuid, gpu.model, gpu.memory_mib, gpu.nvlink_peers) for gpu in box.gpus] == [
        ("GPU-1111", "A100-80GB", 81920, (1,)), ("GPU-2222", "A100-80GB", 81920, (0,))]
    assert (box.cpu_millis, box.memory_mib, dict(box.labels)) == (32000, 256 * 1024, {"zone": "a"})
    eight = nodes["gpu-node-2"]
    assert len(eight.gpus) == 8 and {gpu.model for gpu in eight.gpus} == {"H100-80GB"}
    assert [gpu.nvlink_peers for gpu in eight.gpus][:2] == [(1,), (0,)]
    # every key of the docstring's format is in the example (or named beside it): the two say one format
    doc = static.__doc__ or ""
    keys = set(re.findall(r"^\s*-?\s*(\w+):", doc[doc.index("Format::") + 8:doc.index("Without")], re.M))
    keys |= set(re.findall(r"[{,]\s*(\w+):", doc[doc.index("Format::") + 8:doc.index("Without")]))
    said = ADMIN.read_text(encoding="utf-8")
    assert keys and not {key for key in keys if key not in said}, keys
