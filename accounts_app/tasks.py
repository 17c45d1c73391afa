"""People's accounts need no work in the background: invitations and tokens expire by their dates,
checked when they are used."""
