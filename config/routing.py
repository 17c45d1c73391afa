"""Websocket routes, gathered from the apps that serve them."""

from django.urls import path

from chat_app.consumers import ChatConsumer

websocket_urlpatterns = [
    path("ws/chat/", ChatConsumer.as_asgi()),
]
