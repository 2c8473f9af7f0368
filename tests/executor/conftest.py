"""One local Dask cluster (2 single-threaded worker processes) for the whole module: starting one
takes seconds on a loaded machine."""

import logging

import pytest


@pytest.fixture(scope="package")
def cluster():
    distributed = pytest.importorskip("distributed")
    c = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
    )
    yield c
    c.close()


@pytest.fixture
def address(cluster):
    return cluster.scheduler_address
