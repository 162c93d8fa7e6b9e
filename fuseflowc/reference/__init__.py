"""The reference evaluator (`fuseflowc run`): the project's independent correctness oracle.

It evaluates a checked program with numpy/scipy following the sparsity semantics of
docs/language.md and depends only on the program IR and the data model.
"""

from .evaluate import evaluate, evaluate_statements
from .statements import StatementResult

__all__ = ["StatementResult", "evaluate", "evaluate_statements"]
