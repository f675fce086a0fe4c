"""The site's URLs plus one view that fails, for the 500 page's test."""

from __future__ import annotations

from typing import Any

from django.urls import path

from prob2vec_site.urls import urlpatterns as site_urlpatterns


def boom(request: Any) -> Any:
    raise RuntimeError("a bug")


urlpatterns = [*site_urlpatterns, path("boom/", boom)]
