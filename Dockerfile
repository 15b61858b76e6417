# ghcr.io/proxy-await/proxy-await: the static proxy-await binary alone, at
# /proxy-await. Application images copy it in with a multi-stage build:
#
#   FROM ghcr.io/proxy-await/proxy-await:v1 AS proxy-await
#   FROM gcr.io/distroless/static-debian12
#   COPY --from=proxy-await /proxy-await /proxy-await
#   ENTRYPOINT ["/proxy-await", "--"]
#   CMD ["/app"]
#
# The build context needs the static binary as ./proxy-await: from source,
#
#   make build && cp bin/proxy-await . && docker build -t proxy-await .
#
# or the linux binary of a goreleaser release, copied to ./proxy-await the same way.
FROM scratch
COPY proxy-await /proxy-await
ENTRYPOINT ["/proxy-await"]
