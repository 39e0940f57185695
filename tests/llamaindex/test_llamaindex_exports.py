"""The public names of ucma_llamaindex, and one clear error without llama-index-core."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import ucma_llamaindex

ROOT = Path(__file__).parents[2]


def test_public_names() -> None:
    assert ucma_llamaindex.__all__ == [
        "LlamaIndexChatTransport",
        "LlamaIndexEmbedder",
        "UCMAChatMemory",
        "UCMAMemoryBlock",
        "UCMARetriever",
        "UCMAToolSpec",
        "llamaindex_provider",
    ]
    assert sorted(ucma_llamaindex.__all__) == ucma_llamaindex.__all__


def test_without_llama_index_the_core_works_and_the_adapter_names_the_extra() -> None:
    code = textwrap.dedent(
        """
        import sys

        class NoLlamaIndex:  # makes llama_index look uninstalled
            def find_spec(self, name, path=None, target=None):
                if name == "llama_index" or name.startswith("llama_index."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NoLlamaIndex())
        import ucma_core
        from ucma_core.errors import DependencyMissingError
        try:
            import ucma_llamaindex
        except DependencyMissingError as e:
            print(type(e).__name__, isinstance(e, ImportError), e)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == (
        "DependencyMissingError True ucma_llamaindex needs llama-index-core, which is not installed: "
        "pip install 'ucma[llamaindex]'"
    )
