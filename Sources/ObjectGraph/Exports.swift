@_exported import Foundation
@_exported import Observation

/// The Observation types `@Model` expands to, named through ObjectGraph so that a model file needs
/// no `import Observation`, as with SwiftData.
public typealias _ObjectGraphObservationRegistrar = Observation.ObservationRegistrar
public typealias _ObjectGraphObservable = Observation.Observable
