"""What counts as the database connection itself going, so that the same work may be tried again on
another (``foundation.exceptions.connection_lost``)."""

import psycopg
import pytest
from django.db import OperationalError
from psycopg_pool import PoolTimeout

from foundation.exceptions import connection_lost


@pytest.mark.parametrize(
    ("error", "lost"),
    [
        (psycopg.OperationalError("the connection is closed"), True),
        (psycopg.errors.AdminShutdown("terminating connection due to administrator command"), True),
        (psycopg.errors.ConnectionFailure("connection failure"), True),
        (psycopg.errors.QueryCanceled("canceling statement due to statement timeout"), False),
        (psycopg.errors.UniqueViolation("duplicate key"), False),
        (psycopg.DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes"), False),
        (PoolTimeout("couldn't get a connection after 5.00 sec"), False),
        (ValueError("not the database's"), False),
    ],
)
def test_only_errors_that_end_the_connection_itself_count_as_a_lost_connection(error, lost):
    assert connection_lost(error) is lost
    wrapped = OperationalError(str(error))
    wrapped.__cause__ = error  # as Django raises what psycopg raised
    assert connection_lost(wrapped) is lost
