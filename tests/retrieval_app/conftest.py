import pytest

from tests.factories import index_document
from tests.samples import KETTLE, ROUTER


@pytest.fixture
def library(user):
    """Two indexed product manuals of the signed-in user."""
    return {"router": index_document(user, "router.md", ROUTER), "kettle": index_document(user, "kettle.md", KETTLE)}
