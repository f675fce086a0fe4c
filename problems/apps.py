from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ProblemsConfig(AppConfig):
    name = "problems"
    verbose_name = "Problem bank"

    def ready(self) -> None:
        import problems.login_throttle  # noqa: F401  (connects the sign-in signal receivers)
        from problems.roles import roles_ensure

        # Permissions exist only after every app has migrated, so groups are (re)built then.
        post_migrate.connect(roles_ensure, dispatch_uid="problems.roles_ensure")
