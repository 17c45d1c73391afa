"""The forms a person fills in to join: a username and a password checked by Django's validators."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.forms import UsernameField

from accounts_app.models import NOTE_MAX_CHARS


class JoinForm(forms.Form):
    username = UsernameField(
        max_length=150,
        widget=forms.TextInput(attrs={"autocomplete": "username", "autocapitalize": "none"}),
        help_text="Letters, digits and @ . + - _ only.",
    )
    password1 = forms.CharField(
        label="Password", strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
    password2 = forms.CharField(
        label="Password again", strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["password1"].help_text = " ".join(password_validation.password_validators_help_texts())

    def clean_username(self) -> str:
        username = self.cleaned_data["username"]
        get_user_model().username_validator(username)
        return username

    def clean(self) -> dict:
        cleaned = super().clean()
        first, second = cleaned.get("password1"), cleaned.get("password2")
        if first and second and first != second:
            self.add_error("password2", "The two passwords differ.")
        elif first:
            # The validators compare the password with the username, as they would for the saved account.
            candidate = get_user_model()(username=cleaned.get("username", ""))
            try:
                password_validation.validate_password(first, candidate)
            except forms.ValidationError as error:
                self.add_error("password1", error)
        return cleaned


class SignUpForm(JoinForm):
    note = forms.CharField(
        label="Who you are (for the operator)",
        required=False,
        max_length=NOTE_MAX_CHARS,
        widget=forms.TextInput(attrs={"autocomplete": "name"}),
    )
