public import GatewayCore

/// `tracing`: distributed traces. While on, the gateway continues the trace of
/// an incoming W3C `traceparent` (or starts one, as the sampler decides), sends
/// each upstream attempt a `traceparent` whose parent is that attempt's span,
/// and exports one SERVER span per exchange and one CLIENT span per attempt
/// as OpenTelemetry (OTLP over HTTP, protobuf), batched off the event loops.
/// Off by default, and then it costs nothing.
///
/// The standard OpenTelemetry variables apply over the file's values (the
/// environment wins, as in the OpenTelemetry SDKs that read it):
/// `OTEL_TRACES_EXPORTER=otlp` turns tracing on (`none` off, as does
/// `OTEL_SDK_DISABLED=true`); once on, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
/// (or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`), `..._PROTOCOL`,
/// `..._HEADERS`, `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER` and `_ARG`,
/// `OTEL_BSP_SCHEDULE_DELAY` and `OTEL_BSP_MAX_QUEUE_SIZE` (``environmentSources``
/// says which came from where).
public struct TracingConfig: Sendable, Equatable {
    /// `sampler`: whether a trace the gateway starts (or continues) is
    /// recorded and exported. A trace that is not still carries its context upstream.
    public enum Sampler: String, Sendable, Equatable, CaseIterable {
        case alwaysOn = "always_on"
        case alwaysOff = "always_off"
        case traceIDRatio = "traceidratio"
        case parentBasedAlwaysOn = "parentbased_always_on"
        case parentBasedAlwaysOff = "parentbased_always_off"
        /// The parent's decision when the request has a `traceparent`, else `sampler_ratio` of new traces.
        case parentBasedTraceIDRatio = "parentbased_traceidratio"

        /// Whether `sampler_ratio` applies.
        public var usesRatio: Bool { self == .traceIDRatio || self == .parentBasedTraceIDRatio }
    }

    /// `protocol`: how spans go to the collector: OTLP over HTTP with
    /// protobuf bodies (port 4318), or OTLP over gRPC (HTTP/2, port 4317),
    /// sent through the gateway's upstream pool with `tls`.
    public enum ExportProtocol: String, Sendable, Equatable, CaseIterable {
        case httpProtobuf = "http/protobuf"
        case grpc
    }

    /// One of `headers`: a field sent with every export (a collector's API key).
    public struct Header: Sendable, Equatable {
        /// `name`
        public var name: String
        /// `value` (`value_env`, `value_file`): never shown.
        public var value: Secret

        public init(name: String, value: Secret) {
            self.name = name
            self.value = value
        }
    }

    /// `enabled`
    public var enabled: Bool
    /// `endpoint`: the URL spans are POSTed to, used as written (like
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`): `http://collector:4318/v1/traces`.
    public var endpoint: String
    /// `protocol`
    public var exportProtocol: ExportProtocol
    /// `headers`
    public var headers: [Header]
    /// `tls`: how a `grpc` collector's certificate is verified (`ca_file`,
    /// `pins`) and the client certificate presented to it, as an upstream's.
    public var tls: UpstreamTLSSettings = .standard
    /// `service_name`: the resource's `service.name`.
    public var serviceName: String
    /// `sampler`
    public var sampler: Sampler
    /// `sampler_ratio`: the share of new traces sampled, 0 to 1 (with `traceidratio` samplers).
    public var samplerRatio: Double
    /// `schedule_delay`: spans are exported in a batch this often (or when 512 wait).
    public var scheduleDelay: Duration
    /// `max_queue`: spans waiting for export; further ones are dropped (and
    /// counted in `gateway_trace_spans_dropped_total`), never a request held up.
    public var maxQueue: Int
    /// The keys an OpenTelemetry variable set, with its name (`endpoint` →
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`): errors and `check-config` name it.
    public var environmentSources: [String: String]

    public static let defaultEndpoint = "http://localhost:4318/v1/traces"
    /// The OpenTelemetry default for `protocol: grpc` (used while `endpoint` is the HTTP default).
    public static let defaultGRPCEndpoint = "http://localhost:4317"

    /// `endpoint`, or the gRPC default while it is the HTTP one and `protocol` is `grpc`.
    public var effectiveEndpoint: String {
        exportProtocol == .grpc && endpoint == Self.defaultEndpoint ? Self.defaultGRPCEndpoint : endpoint
    }
    public static let defaultServiceName = "gateway"
    public static let defaultScheduleDelay: Duration = .seconds(5)
    public static let defaultMaxQueue = 2048
    public static let maxQueueLimit = 1_000_000

    public init(
        enabled: Bool = false,
        endpoint: String = TracingConfig.defaultEndpoint,
        exportProtocol: ExportProtocol = .httpProtobuf,
        headers: [Header] = [],
        serviceName: String = TracingConfig.defaultServiceName,
        sampler: Sampler = .parentBasedTraceIDRatio,
        samplerRatio: Double = 1,
        scheduleDelay: Duration = TracingConfig.defaultScheduleDelay,
        maxQueue: Int = TracingConfig.defaultMaxQueue,
        environmentSources: [String: String] = [:]
    ) {
        self.enabled = enabled
        self.endpoint = endpoint
        self.exportProtocol = exportProtocol
        self.headers = headers
        self.serviceName = serviceName
        self.sampler = sampler
        self.samplerRatio = samplerRatio
        self.scheduleDelay = scheduleDelay
        self.maxQueue = maxQueue
        self.environmentSources = environmentSources
    }
}
