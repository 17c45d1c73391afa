"""The API's shared behaviour: health, the error shape, tokens, the schema and its docs."""

import pytest


@pytest.mark.django_db
def test_anyone_sees_whether_the_service_is_healthy_but_not_its_versions(api_client):
    response = api_client.get("/api/health")
    assert response.status_code == 200
    assert response.json() == {
        "database": {"ok": True},
        "connections": {"ok": True},
        "redis": {"ok": True},
        "warm": {"ok": True},
        "status": "ok",
    }


@pytest.mark.django_db
def test_health_reports_postgres_pgvector_and_redis_to_staff(staff_api):
    response = staff_api.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["pgvector"].startswith("0.")
    assert body["database"]["pending_migrations"] == 0
    assert body["redis"]["ok"] is True


@pytest.mark.django_db
def test_health_is_degraded_when_redis_is_unreachable(staff_api, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    response = staff_api.get("/api/health")
    assert response.status_code == 503
    assert response.json()["redis"]["ok"] is False


@pytest.mark.django_db
def test_health_names_vector_columns_that_do_not_fit_the_configured_model(staff_api, settings):
    settings.EMBEDDING_DIMENSIONS = 1536
    response = staff_api.get("/api/health")
    assert response.status_code == 503
    database = response.json()["database"]
    assert database["ok"] is False
    assert "sessions_app_message.embedding" in database["error"]
    assert "EMBEDDING_DIMENSIONS is 1536" in database["error"]


@pytest.mark.django_db
def test_an_unknown_api_path_answers_in_the_error_shape(api_client):
    response = api_client.get("/api/no/such/thing")
    assert response.status_code == 404
    assert response.json() == {
        "error": {"code": "not_found", "message": "No API endpoint at /api/no/such/thing.", "details": {}}
    }


@pytest.mark.django_db
def test_a_token_is_issued_for_a_username_and_password(api_client, user):
    response = api_client.post(
        "/api/auth/token", {"username": user.username, "password": "correct horse battery staple"}, format="json"
    )
    assert response.status_code == 200
    assert len(response.json()["token"]) == 40


@pytest.mark.django_db
def test_wrong_credentials_get_a_400_in_the_error_shape(api_client, user):
    response = api_client.post("/api/auth/token", {"username": user.username, "password": "nope"}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert "Unable to log in" in error["message"]
    assert "fields" in error["details"]


@pytest.mark.django_db
def test_malformed_json_is_a_400_not_a_500(api_client):
    response = api_client.post("/api/auth/token", data="{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


@pytest.mark.django_db
def test_the_openapi_schema_and_its_docs_are_served_without_a_cdn(api_client):
    schema = api_client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/health" in schema.content
    docs = api_client.get("/api/docs/")
    assert docs.status_code == 200
    page = docs.content.decode()
    assert "swagger-ui" in page and "cdn.jsdelivr" not in page


@pytest.mark.django_db
def test_the_home_page_links_the_admin_and_the_docs(client):
    page = client.get("/").content.decode()
    assert 'href="/admin/"' in page and 'href="/api/docs/"' in page
