# Evergreen's production image: gunicorn web workers, Celery worker and beat share it.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY evergreen_site evergreen_site
COPY knowledge knowledge
COPY api api
COPY gateway gateway
COPY mcp_bridge mcp_bridge
COPY manage_api manage_api
COPY templates templates
COPY manage.py ./
RUN pip install --no-cache-dir . \
    && EVERGREEN_DEBUG=0 EVERGREEN_SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
    && useradd --system --uid 1000 evergreen && mkdir -p /app/var/release-files /app/var/build-cache && chown -R evergreen /app/var

USER evergreen
EXPOSE 8000
CMD ["gunicorn", "evergreen_site.wsgi", "-c", "python:evergreen_site.gunicorn", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
