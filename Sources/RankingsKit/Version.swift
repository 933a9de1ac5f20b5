public enum RankingsKitVersion { public static let string = "0.2.0" }
