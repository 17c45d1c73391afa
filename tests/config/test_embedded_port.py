"""The embedded Redis keeps its port across restarts, so processes already running find it again."""

import socket

from config.embedded import _reusable_port
from tests.helpers import free_port


def test_the_previous_port_is_reused_while_it_is_free():
    port = free_port()
    assert _reusable_port(port) == port


def test_a_port_taken_by_another_program_is_given_up_for_a_free_one():
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        taken = other.getsockname()[1]
        port = _reusable_port(taken)
        assert port != taken and port > 0


def test_a_first_start_gets_a_free_port():
    assert _reusable_port(None) > 0
