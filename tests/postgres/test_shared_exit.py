"""A worker on a memory in PostgreSQL that ends without ``close()`` commits what it kept
(:mod:`ucma_core.shutdown`): the reader marks of its ``remember`` calls, which a plain
``Memory(url)`` keeps until its next write."""

from __future__ import annotations

from tests._persist_util import run_child
from tests.postgres.conftest import Servers
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder


def test_a_worker_that_never_closes_keeps_its_reader_marks(servers: Servers) -> None:
    url = servers.url()
    kettle, seen = run_child(
        """
from ucma_core import ChromaConfig
config = MemoryConfig(chroma=ChromaConfig(host="127.0.0.1", port=int(sys.argv[2])), importance_threshold=0.0)
mem = Memory(sys.argv[1], embedder=HashingEmbedder(), config=config)
emit(mem.observe("the blue kettle is on the top shelf of the pantry", user_id="u"))
emit([mem.remember("where is the blue kettle?", user_id="u", k=1)[0].id for _ in range(2)])
# only reads since the last write, no close: the interpreter simply exits
""",
        url,
        servers.chroma_port,
    )
    assert seen == [kettle] * 2
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as again:
        record = again.get(kettle)
        assert record is not None and record.access_count == 2
