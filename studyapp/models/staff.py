"""Server-side staff sessions: a signed session cookie alone cannot be revoked, so each staff sign-in
also writes a row here, and a staff request counts as signed in only while its row exists and has
not expired (studyapp.middleware.StaffSessionMiddleware). Signing out, a password change and the
expiry (``STUDYAPP_STAFF_SESSION_SECONDS``) delete or outdate the row: a copied cookie stops working."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class StaffSession(models.Model):
    key_digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the random key kept in the signed session")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="staff_sessions")
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["user", "created_at"]
        indexes = [models.Index(fields=["user", "expires_at"], name="staffsession_user_expiry")]

    def __str__(self) -> str:
        return f"{self.user} until {self.expires_at:%Y-%m-%d %H:%M}"
