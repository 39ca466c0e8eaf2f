"""The management REST API (/api/manage/): entries, versions, review, releases and more, through the services."""
