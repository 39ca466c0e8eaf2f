"""The management API's viewsets, one module per resource."""
