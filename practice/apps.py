from django.apps import AppConfig


class PracticeConfig(AppConfig):
    name = "practice"
    verbose_name = "Practice and progress"
