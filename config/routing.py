"""Websocket routes, gathered from the apps that serve them."""

websocket_urlpatterns: list = []
