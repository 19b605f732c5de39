from tests.support.redis import redis_server, redis_url  # noqa: F401  (fixtures)
