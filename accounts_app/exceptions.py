"""What can go wrong when a person joins or manages their tokens, in the contract's kinds of error."""

from foundation.exceptions import ConflictError, InvalidInputError, NotFoundError


class InvitationUnusable(NotFoundError):
    """Used, revoked, expired or never made: the link is refused alike in every case."""

    code = "invitation_unusable"
    default_message = "This invitation link cannot be used: it was used already, withdrawn, or it expired."


class UsernameTaken(InvalidInputError):
    code = "username_taken"
    default_message = "That username is taken; choose another."


class RequestAlreadyDecided(ConflictError):
    code = "request_decided"
    default_message = "This request was decided already."


class TooManyPendingRequests(ConflictError):
    code = "requests_full"
    default_message = "Requests for an account are not taken just now; try again later."


class InvalidInvitation(InvalidInputError):
    code = "invalid_invitation"
    default_message = "An invitation needs a lifetime in days."


class TokenLimitReached(InvalidInputError):
    code = "token_limit_reached"
    default_message = "You have as many API tokens as a person may hold; revoke one first."
