"""Why ``foundation.celery.RedisTransport`` exists: when Redis goes away while a worker holds an unacknowledged
message, kombu closes the channel a second time after its connection was let go, and its ``_connparams``
then reads an attribute of nothing. The first test pins that kombu (as pinned) still does so: once it
fails, kombu handles it and the subclass can go. The second is what the worker gets from ours instead."""

from types import SimpleNamespace

import pytest
import redis
from kombu.transport import redis as kombu_redis

from foundation.celery import RedisTransport

LET_GO = (None, SimpleNamespace(client=None))  # the channel's connection, and that connection's client


def _closed_channel(channel_class: type, connection: object):
    channel = channel_class.__new__(channel_class)  # the state close() leaves behind, without a broker
    channel.connection = connection
    return channel


@pytest.mark.parametrize("connection", LET_GO)
def test_kombu_itself_still_fails_with_an_attribute_error_on_a_let_go_connection(connection):
    with pytest.raises(AttributeError):
        _closed_channel(kombu_redis.Channel, connection)._connparams()


@pytest.mark.parametrize("connection", LET_GO)
def test_ours_reports_a_lost_connection_which_the_worker_reconnects_from(connection):
    with pytest.raises(redis.ConnectionError):
        _closed_channel(RedisTransport.Channel, connection)._connparams()


def test_a_channel_publishes_every_message_through_one_client_until_its_pool_changes():
    channel = RedisTransport.Channel.__new__(RedisTransport.Channel)
    channel.Client, channel._pool = redis.Redis, redis.ConnectionPool()  # what connecting sets
    first = channel._create_client()
    assert channel._create_client() is first
    assert first.connection_pool is channel._pool

    channel._pool = redis.ConnectionPool()  # the channel reconnected
    again = channel._create_client()
    assert again is not first and again.connection_pool is channel._pool
