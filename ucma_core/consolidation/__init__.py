"""Sleep consolidation: the cycle that turns a pile of episodes into organised memory."""

from ucma_core.consolidation.context import CycleContext
from ucma_core.consolidation.cycle import PHASES, run_cycle
from ucma_core.consolidation.report import ConsolidationReport

__all__ = ["PHASES", "ConsolidationReport", "CycleContext", "run_cycle"]
