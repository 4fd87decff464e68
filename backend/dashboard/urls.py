"""Dashboard URLs: each area keeps its own list; all share the `dashboard` namespace."""

from backend.dashboard.analytics.urls import urlpatterns as analytics_urls
from backend.dashboard.channels.urls import urlpatterns as channels_urls
from backend.dashboard.evaluation.urls import urlpatterns as evaluation_urls
from backend.dashboard.gurus.urls import urlpatterns as gurus_urls
from backend.dashboard.memory.urls import urlpatterns as memory_urls
from backend.dashboard.questions.urls import urlpatterns as questions_urls
from backend.dashboard.settings_page.urls import urlpatterns as settings_urls
from backend.dashboard.sources.urls import urlpatterns as sources_urls

app_name = "dashboard"
urlpatterns = [*gurus_urls, *sources_urls, *questions_urls, *channels_urls, *settings_urls, *analytics_urls,
               *evaluation_urls, *memory_urls]
