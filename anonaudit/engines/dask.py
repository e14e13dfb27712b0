"""The Dask engine: each part's class table on a worker, merged by Dask's groupby.

``pip install 'anonaudit[dask]'``. Every part of every source (a file of a dataset, or
a whole single file) becomes one task that reads the part where the worker runs and
aggregates it with the local engine's DuckDB ``GROUP BY`` (:func:`group_counts`) into
a partial class table. The partials are summed by Dask's own ``groupby(...).sum()``,
which measured faster than gathering partials through hand-written futures, as a tree
reduction into one partition (``split_out=1``): the merged table is collected to the
client anyway, and on ``benchmarks/bench_lake.py`` (20 files whose partials barely
shrink, 17M partial rows into 2.8M) the tree took 14 s where the default shuffle-based
``split_out`` took 37 s; a DuckDB merge in the tree's steps was no faster (14 s), the
time going to moving the partials between processes. Each task also fingerprints its
part where it reads it (:func:`~anonaudit.sources.base.fingerprint_now`: a CSV file as
it streams, a local Parquet file once read) and hands the digest back in the partial's
``attrs``, beside the records it counted. Tasks return one pandas frame
backed by a single (combined) Arrow chunk per column, since Dask over-estimates the size
of multi-chunk Arrow data and would spill or rebalance for nothing. The checks then run
on the merged table as on any other.

Failure handling: a task whose worker dies is recomputed elsewhere by Dask (a retried
success); when workers keep dying on a task, or a part cannot be read, the audit fails
with an error naming it (:class:`~anonaudit.errors.EngineError`, or the part's own
input error) and never returns a table of part of the data. The records counted per
part must add up to the merged table's, or the engine refuses the result.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from anonaudit.classtable import ClassTable, to_string_batch
from anonaudit.engines.local import (
    ROW_COUNT,
    check_columns,
    group_counts,
    numbered_batches,
    provenance,
    total_size,
)
from anonaudit.errors import AnonauditError, EngineError, InputError, MissingDependencyError
from anonaudit.progress import Progress
from anonaudit.sources.base import Source, fingerprint_now, parts_of

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["build_class_table"]

_COUNT = "__anonaudit_count__"
_SHA256 = "anonaudit_sha256"  #: the part's digest, in its partial's ``attrs``
_TEXT = pd.StringDtype("pyarrow")


def build_class_table(
    sources: Sequence[Source],
    *,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    scheduler: Client | str | None = None,
    progress: Progress | None = None,
    count: str | None = None,
) -> ClassTable:
    """Aggregate ``sources`` into one class table on a Dask cluster.

    Parameters
    ----------
    sources : sequence of Source
        Files, datasets or frames; their parts must be picklable and readable from the
        workers (object storage, or paths every worker sees).
    quasi_identifiers, sensitive : sequence of str
        Column roles.
    scheduler : distributed.Client or str, optional
        A running client, or a scheduler address (``tcp://host:8786``). ``None`` starts
        a local cluster with one worker process per core for this call.
    progress : Progress, optional
        Where to report parts and bytes done.
    count : str, optional
        A column of records per row (a frequency table), summed per combination
        (:func:`anonaudit.engines.local.build_class_table`).

    Returns
    -------
    ClassTable
        The same table the local engine builds, row order aside.

    Raises
    ------
    EngineError
        The scheduler cannot be reached, or workers kept dying on a part.
    MissingDependencyError
        Dask is not installed.
    """
    dd, distributed = _dask()
    columns = check_columns(sources, quasi_identifiers, sensitive)
    if count is not None:
        check_columns(sources, [count], ())
    flat = [part for source in sources for part in parts_of(source)]
    meta = pd.DataFrame({name: pd.Series(dtype=_TEXT) for name in columns})
    meta[_COUNT] = pd.Series(dtype="int64")
    with _connect(scheduler, distributed) as client:
        try:
            partials = dd.from_map(
                _partial, flat, args=(columns, count), meta=meta, label="anonaudit-part"
            )
            partials = client.persist(partials)
            _watch(distributed, partials, flat, progress)
            per_part = partials.map_partitions(
                _total,
                meta=pd.DataFrame(
                    {"rows": pd.Series(dtype="int64"), _SHA256: pd.Series(dtype=object)}
                ),
            )
            grouped = partials.groupby(columns, dropna=False, observed=True, sort=False)
            merged = grouped[_COUNT].sum(split_out=1)
            rows, counts = client.compute([per_part, merged], sync=True)
        except AnonauditError:
            raise
        except distributed.KilledWorker as exc:
            raise EngineError(
                f"Dask workers died while running {exc.task!r} more often than the "
                f"scheduler retries ({exc}); the audit is not complete. Check the workers' "
                "memory and logs, then run again"
            ) from None
        except (OSError, distributed.comm.CommClosedError) as exc:
            raise EngineError(f"lost the Dask cluster during the audit: {exc}") from None
        except Exception as exc:
            raise InputError(f"cannot read input on a Dask worker: {exc}") from None
    if progress is not None:
        progress.finish()
    part_rows = [int(n) for n in rows["rows"]]
    digests = [digest if isinstance(digest, str) else None for digest in rows[_SHA256]]
    frame = counts.reset_index()
    frame = frame[frame[_COUNT] > 0]  # groups whose rows all counted 0 records
    keys = pa.Table.from_batches(
        [to_string_batch(pa.Table.from_pandas(frame[columns], preserve_index=False), columns)]
    )
    totals = frame[_COUNT].to_numpy(dtype=np.int64)
    if len(part_rows) != len(flat) or sum(part_rows) != int(totals.sum()):
        raise EngineError(
            f"the Dask result covers {int(totals.sum()):,} records but the parts read "
            f"{sum(part_rows):,}; refusing a partial audit"
        )
    stats = provenance(sources, part_rows, columns, digests)
    return ClassTable(tuple(quasi_identifiers), tuple(sensitive), keys, totals, stats)


def _partial(part: Source, audited: list[str], count: str | None) -> pd.DataFrame:
    """One part's class table as a pandas frame (runs on a worker).

    (Not named ``columns``: ``dask.dataframe.from_map`` passes that for projections.)
    """
    keys, counts, _ = group_counts(
        numbered_batches(part, audited, count=count),
        audited,
        count=None if count is None else ROW_COUNT,
    )
    table = keys.combine_chunks().append_column(_COUNT, pa.array(counts, pa.int64()))
    frame: pd.DataFrame = table.to_pandas(types_mapper={pa.string(): _TEXT}.get)
    frame.attrs[_SHA256] = fingerprint_now(part)
    return frame


def _total(partial: pd.DataFrame) -> pd.DataFrame:
    """A part's records and its digest (from :func:`_partial`), as one row."""
    return pd.DataFrame(
        {
            "rows": pd.Series([int(partial[_COUNT].sum())], dtype="int64"),
            _SHA256: pd.Series([partial.attrs.get(_SHA256)], dtype=object),
        }
    )


def _watch(
    distributed: Any, partials: Any, parts: Sequence[Source], progress: Progress | None
) -> None:
    """Report parts as their tasks finish."""
    if progress is None:
        return
    progress.start(parts=len(parts), size_bytes=total_size(parts))
    for future in distributed.as_completed(distributed.futures_of(partials)):
        _, position = future.key  # (collection name, partition number)
        progress.part_done(parts[position].info.size_bytes)


@contextmanager
def _connect(scheduler: Client | str | None, distributed: Any) -> Iterator[Any]:
    if isinstance(scheduler, distributed.Client):
        yield scheduler
        return
    if scheduler is None:
        with (  # a part's error is the audit's one line, not the workers' logs too
            distributed.LocalCluster(
                dashboard_address=None, silence_logs=logging.CRITICAL
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            yield client
        return
    with _client(str(scheduler), distributed) as client:
        yield client


def _client(scheduler: str, distributed: Any, attempts: int = 2) -> Any:
    """A client of the scheduler at ``scheduler``.

    distributed starts the client's event loop in a thread and gives it 10 s; on a
    saturated machine it may not start in time (``distributed.utils.LoopRunner`` then
    fails an ``assert``): that is tried ``attempts`` times, then reported as an error.

    A client whose start failed is garbage in a reference cycle, its event loop still
    running; it is collected here, before the error is raised. Left to the collector, it
    could be collected inside the next client's start, which holds ``LoopRunner``'s
    class-wide lock: its ``__del__`` stops its loop, takes that lock again and the
    process hangs for ever (distributed 2026.8; the Dask tests hung CI so, after a test
    of an unreachable scheduler).
    """
    error: EngineError | None
    try:
        return distributed.Client(scheduler, timeout="10s")
    except (ValueError, TypeError) as exc:  # not an address: "missing port number", ...
        error = EngineError(
            f"--scheduler {scheduler}: not a Dask scheduler address ({exc}); give one "
            "such as tcp://host:8786"
        )
    except (OSError, TimeoutError) as exc:
        error = EngineError(
            f"cannot reach the Dask scheduler at {scheduler} ({exc}); check --scheduler "
            "and that the scheduler is running"
        )
    except AssertionError:  # the event loop's thread did not start within 10 s
        error = None
        if attempts <= 1:
            error = EngineError(
                f"the Dask client for {scheduler} could not start its event loop within "
                "10 s; the machine is overloaded: run again"
            )
    gc.collect()  # the failed client, its exception gone (see above)
    if error is None:
        return _client(scheduler, distributed, attempts - 1)
    raise error


def _dask() -> tuple[Any, Any]:
    try:
        import dask.dataframe as dd
        import distributed
    except ImportError:
        raise MissingDependencyError(
            "the Dask engine needs dask and distributed; pip install 'anonaudit[dask]'"
        ) from None
    return dd, distributed
