import pytest

from tests.factories import UserFactory


@pytest.fixture
def staff_api(api_client, db):
    """The API as a staff member calls it: health answers with versions, errors and backlogs."""
    api_client.force_authenticate(UserFactory(is_staff=True))
    return api_client
