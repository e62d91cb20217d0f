import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import XCTest
import ObjectGraphMacros

/// `#Index` expands to the static member `PersistentModel` reads the indexes from, typed so that
/// `\.title` finds its root; misuse is reported with the exact messages below.
final class IndexMacroTests: XCTestCase {
    func testIndexesBecomeTypedKeyPathLists() {
        assertMacroExpansion(
            #"""
            final class Snippet {
                #Index<Snippet>([\.updatedAt], [\.deletedAt, \.folder], [\Snippet.title])
                var title: String = ""
            }
            """#,
            expandedSource: #"""
                final class Snippet {
                    static var _objectGraphIndexes: [[AnyKeyPath]] {
                        let indices: [[PartialKeyPath<Snippet>]] = [
                        [\.updatedAt],
                        [\.deletedAt, \.folder],
                        [\Snippet.title]
                        ]
                        return indices
                    }
                    var title: String = ""
                }
                """#,
            macroSpecs: testMacroSpecs
        )
    }

    /// SwiftData's typed form: the arrays inside `.binary(…)` and `.rtree(…)` are the indexes.
    func testTheTypedFormBecomesTheSameKeyPathLists() {
        assertMacroExpansion(
            #"""
            final class Place {
                #Index<Place>(.binary([\.name]), .rtree([\.latitude, \.longitude]), Schema.Index<Place>.Types.binary([\.visitedAt]))
            }
            """#,
            expandedSource: #"""
                final class Place {
                    static var _objectGraphIndexes: [[AnyKeyPath]] {
                        let indices: [[PartialKeyPath<Place>]] = [
                        [\.name],
                        [\.latitude, \.longitude],
                        [\.visitedAt]
                        ]
                        return indices
                    }
                }
                """#,
            macroSpecs: testMacroSpecs
        )
    }

    /// `#Unique` has no typed form: only arrays.
    func testUniqueRefusesTheTypedForm() {
        assertMacroExpansion(
            #"""
            final class Place {
                #Unique<Place>(.binary([\.name]))
            }
            """#,
            expandedSource: #"""
                final class Place {
                }
                """#,
            diagnostics: [DiagnosticSpec(message: #"each constraint of #Unique is an array of key paths: write [\.title], or [\.a, \.b] for a combination that is unique"#, line: 2, column: 20)],
            macroSpecs: testMacroSpecs
        )
    }

    /// The member satisfies a requirement of a public protocol, so a public model needs it public.
    func testPublicModelGetsAPublicMember() {
        assertMacroExpansion(
            #"""
            public final class Snippet {
                #Index<Snippet>([\.title])
            }
            """#,
            expandedSource: #"""
                public final class Snippet {
                    public static var _objectGraphIndexes: [[AnyKeyPath]] {
                        let indices: [[PartialKeyPath<Snippet>]] = [
                        [\.title]
                        ]
                        return indices
                    }
                }
                """#,
            macroSpecs: testMacroSpecs
        )
    }

    /// `@Model` leaves `#Index` to its own expansion: no property, no metadata entry.
    func testModelIgnoresTheIndexDeclaration() {
        assertMacroExpansion(
            #"""
            @Model final class Note {
                #Index<Note>([\.title])
                var title: String
            }
            """#,
            expandedSource: expandedModel(
                "Note",
                members: #"""
                        static var _objectGraphIndexes: [[AnyKeyPath]] {
                            let indices: [[PartialKeyPath<Note>]] = [
                            [\.title]
                            ]
                            return indices
                        }
                        @ObjectGraph._PersistedProperty
                        var title: String
                    """#,
                metadata: [#"ObjectGraph.Schema.PropertyMetadata(name: "title", keypath: Note._objectGraphKeyPath_title, defaultValue: nil, metadata: nil)"#],
                initializer: ["_title = _ObjectGraphNoType()"]),
            macroSpecs: testMacroSpecs
        )
    }

    // MARK: - Diagnostics

    func testWithoutTheModelType() {
        assertMacroExpansion(
            #"""
            final class Snippet {
                #Index([\.title])
            }
            """#,
            expandedSource: """
                final class Snippet {
                }
                """,
            diagnostics: [DiagnosticSpec(
                message: #"#Index needs the model class as its generic argument: #Index<Snippet>([\.title])"#,
                line: 2, column: 5)],
            macroSpecs: testMacroSpecs
        )
    }

    func testWithoutIndices() {
        assertMacroExpansion(
            """
            final class Snippet {
                #Index<Snippet>()
            }
            """,
            expandedSource: """
                final class Snippet {
                }
                """,
            diagnostics: [DiagnosticSpec(
                message: #"#Index needs at least one index: an array of key paths, such as #Index<Snippet>([\.title])"#,
                line: 2, column: 5)],
            macroSpecs: testMacroSpecs
        )
    }

    func testAKeyPathInsteadOfAnArray() {
        assertMacroExpansion(
            #"""
            final class Snippet {
                #Index<Snippet>([\.title], \.updatedAt)
            }
            """#,
            expandedSource: """
                final class Snippet {
                }
                """,
            diagnostics: [DiagnosticSpec(
                message: #"each index of #Index is an array of key paths: write [\.title], or [\.a, \.b] for an index on both"#,
                line: 2, column: 32)],
            macroSpecs: testMacroSpecs
        )
    }

    func testAnEmptyIndex() {
        assertMacroExpansion(
            #"""
            final class Snippet {
                #Index<Snippet>([\.title], [])
            }
            """#,
            expandedSource: """
                final class Snippet {
                }
                """,
            diagnostics: [DiagnosticSpec(
                message: "an index needs at least one key path: remove the empty array or name the properties to index",
                line: 2, column: 32)],
            macroSpecs: testMacroSpecs
        )
    }

    func testAnotherModelsType() {
        assertMacroExpansion(
            #"""
            final class Snippet {
                #Index<Folder>([\.name])
            }
            """#,
            expandedSource: """
                final class Snippet {
                }
                """,
            diagnostics: [DiagnosticSpec(
                message: "#Index<Folder> is declared in Snippet: the generic argument must be the model class itself, #Index<Snippet>",
                line: 2, column: 11)],
            macroSpecs: testMacroSpecs
        )
    }

    func testInAStruct() {
        assertMacroExpansion(
            #"""
            struct Snippet {
                #Index<Snippet>([\.title])
            }
            """#,
            expandedSource: """
                struct Snippet {
                }
                """,
            diagnostics: [DiagnosticSpec(message: "#Index can only be used in the body of a @Model class", line: 2, column: 5)],
            macroSpecs: testMacroSpecs
        )
    }

    /// Only `@Model` is expanded here, so that its own diagnostic is the only one.
    func testTwoIndexMacrosInOneModel() {
        assertMacroExpansion(
            #"""
            @Model final class Snippet {
                #Index<Snippet>([\.title])
                #Index<Snippet>([\.body])
            }
            """#,
            expandedSource: expandedModel(
                "Snippet",
                members: #"""
                        #Index<Snippet>([\.title])
                        #Index<Snippet>([\.body])
                    """#,
                metadata: [], initializer: []),
            diagnostics: [DiagnosticSpec(
                message: "a model can use #Index once: list all its indexes in one #Index, one array per index",
                line: 3, column: 5)],
            macroSpecs: ["Model": MacroSpec(type: ModelMacro.self, conformances: modelConformances)]
        )
    }
}

/// `#Unique` expands as `#Index` does, to the member `PersistentModel` reads the constraints from,
/// and reports misuse in its own words.
final class UniqueMacroTests: XCTestCase {
    func testConstraintsBecomeTypedKeyPathLists() {
        assertMacroExpansion(
            #"""
            final class Trip {
                #Unique<Trip>([\.name, \.startDate], [\.code])
                var name: String = ""
            }
            """#,
            expandedSource: #"""
                final class Trip {
                    static var _objectGraphUniqueness: [[AnyKeyPath]] {
                        let constraints: [[PartialKeyPath<Trip>]] = [
                        [\.name, \.startDate],
                        [\.code]
                        ]
                        return constraints
                    }
                    var name: String = ""
                }
                """#,
            macroSpecs: testMacroSpecs
        )
    }

    func testAnEmptyConstraint() {
        assertMacroExpansion(
            #"""
            final class Trip {
                #Unique<Trip>([\.name], [])
            }
            """#,
            expandedSource: """
                final class Trip {
                }
                """,
            diagnostics: [DiagnosticSpec(
                message: "a constraint needs at least one key path: remove the empty array or name the properties that are unique together",
                line: 2, column: 29)],
            macroSpecs: testMacroSpecs
        )
    }

    func testAKeyPathInsteadOfAnArray() {
        assertMacroExpansion(
            #"""
            final class Trip {
                #Unique<Trip>(\.name)
            }
            """#,
            expandedSource: """
                final class Trip {
                }
                """,
            diagnostics: [DiagnosticSpec(
                message: #"each constraint of #Unique is an array of key paths: write [\.title], or [\.a, \.b] for a combination that is unique"#,
                line: 2, column: 19)],
            macroSpecs: testMacroSpecs
        )
    }

    func testAnotherModelsType() {
        assertMacroExpansion(
            #"""
            final class Trip {
                #Unique<Folder>([\.name])
            }
            """#,
            expandedSource: """
                final class Trip {
                }
                """,
            diagnostics: [DiagnosticSpec(
                message: "#Unique<Folder> is declared in Trip: the generic argument must be the model class itself, #Unique<Trip>",
                line: 2, column: 12)],
            macroSpecs: testMacroSpecs
        )
    }

    /// One `#Unique` beside one `#Index` is fine; a second `#Unique` is not.
    func testTwoUniqueMacrosInOneModel() {
        assertMacroExpansion(
            #"""
            @Model final class Trip {
                #Index<Trip>([\.name])
                #Unique<Trip>([\.name])
                #Unique<Trip>([\.code])
            }
            """#,
            expandedSource: expandedModel(
                "Trip",
                members: #"""
                        #Index<Trip>([\.name])
                        #Unique<Trip>([\.name])
                        #Unique<Trip>([\.code])
                    """#,
                metadata: [], initializer: []),
            diagnostics: [DiagnosticSpec(
                message: "a model can use #Unique once: list all its constraints in one #Unique, one array per constraint",
                line: 4, column: 5)],
            macroSpecs: ["Model": MacroSpec(type: ModelMacro.self, conformances: modelConformances)]
        )
    }
}
