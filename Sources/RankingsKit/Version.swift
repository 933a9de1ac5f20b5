public enum RankingsKitVersion { public static let string = "0.3.0" }
